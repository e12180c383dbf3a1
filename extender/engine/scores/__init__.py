"""Score plugins, one module each, under their in-tree names (map, then normalise, 0..100)."""
