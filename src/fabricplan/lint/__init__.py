"""Layer 3: lossless-fabric configuration — parsers, the normalized model, rules, generators."""
