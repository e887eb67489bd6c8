"""SugarCrepe (Hsieh et al., 2023): its released data, construction in the world and tables."""
