"""Looking inside compiled and derived functions: their source, IR and IR stages."""
