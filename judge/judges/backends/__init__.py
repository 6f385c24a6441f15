"""The built-in judge backends: one module each, holding `SPEC` (judge.judges.spec.BackendSpec).
The registry (judge.config.BACKENDS) loads every module of this package; plug-ins come from the
`judge.backends` entry-point group."""
