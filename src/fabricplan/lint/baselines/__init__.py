"""Writing baseline configurations (SONiC, NVUE, EOS) a team starts from; it shares the
normalized model and the headroom arithmetic with the checks, never the readers' internals."""
