"""What runs across every part: `rooms doctor`, `rooms tick`, `rooms demo`, and the registry that wires the parts in."""
