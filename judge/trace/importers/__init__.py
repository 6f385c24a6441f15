"""The built-in trace importers of `judge import`: one module each, holding `SPEC`
(judge.trace.import_spec.ImporterSpec); plug-ins come from the `judge.importers` entry-point group."""
