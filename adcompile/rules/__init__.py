"""Views of the primitive table kept for the transforms until they ask ``ir/primitives`` directly."""
