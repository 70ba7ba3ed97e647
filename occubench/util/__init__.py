"""Small helpers every layer uses: JSON lines, hostile-value-safe JSON, lazy exports, locks, logging, redaction."""
