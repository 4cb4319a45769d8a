"""Many replays at once: sweeps over knobs × histories, auto-tune, and the briefer's size-model calibration."""
