"""Hooks through which later layers (custom Functions, derived functions inside compiled code)
make their objects callable from compiled code. Each registered classifier maps a Python
object to a frontend value, or returns None."""

_CLASSIFIERS = []
_ATTRIBUTE_HANDLERS = []


def register_classifier(fn):
    _CLASSIFIERS.append(fn)
    return fn


def register_attribute_handler(fn):
    _ATTRIBUTE_HANDLERS.append(fn)
    return fn


def classify_extension(value):
    for classifier in _CLASSIFIERS:
        result = classifier(value)
        if result is not None:
            return result
    return None


def attribute_of_extension(translator, base, attr, node):
    for handler in _ATTRIBUTE_HANDLERS:
        result = handler(translator, base, attr, node)
        if result is not None:
            return result
    return None
