"""Layer 3: simulators — the flow-level solver and the packet-level engine and components."""
