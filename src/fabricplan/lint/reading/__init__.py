"""Reading device configurations (SONiC config_db, NVUE, EOS, mlnx_qos, NIC CC) into the
normalized model of :mod:`fabricplan.lint.model`; nothing here judges a value."""
