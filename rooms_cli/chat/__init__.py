"""Chat rooms: shared transcript, roster, coordinator, turn budget (see shared design chat.md)."""
