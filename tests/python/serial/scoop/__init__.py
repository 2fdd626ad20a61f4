# A stand-in for SCOOP (which Debian does not package) that computes its
# API serially in the calling process: the "local run" that
# tests/regress/scoop-examples.sh compares SCOOP's own examples on R3Q
# with.  Only what those examples call.
