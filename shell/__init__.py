"""The kraftsim command line, the metadata shell and the lab language."""
