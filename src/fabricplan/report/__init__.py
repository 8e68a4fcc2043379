"""Tables, figures and documents, from results only."""
