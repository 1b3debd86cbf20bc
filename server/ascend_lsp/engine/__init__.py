"""Pure analysis: source text in, findings out. No LSP, no CLI, no I/O beyond the mappings.
Its modules are imported by name (engine.analyzer, engine.config, ...): importing one loads
no other."""
