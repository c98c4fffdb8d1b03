"""Output edge: tables for terminals, JSON for machines, charts for people."""
