# Layers above the core, added as their sources land.
