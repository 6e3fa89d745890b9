"""The groups of cases, a module each: what each measures and how."""
