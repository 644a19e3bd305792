"""The project: setting it up (`rooms init`), its configuration (`.rooms.yaml`), who acts where (the context)."""
