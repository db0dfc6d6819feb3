"""The 2026-07-28 revision's rules (issue 10)."""
