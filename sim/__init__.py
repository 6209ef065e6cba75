"""The simulated world: clock, events, network, disks, faults, clusters, invariants, traces."""
