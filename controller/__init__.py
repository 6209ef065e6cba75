"""The controller: metadata records, state with revert points, operations, transactions."""
