"""Modules in compiled code: ``self.weight``, ``self.fc1(x)``, ``for layer in self.layers``.

A Module reached in compiled code (the ``self`` of a ``forward``, a model passed to a loss
function, a submodule) is a compile-time ``ModuleValue``. Reading an attribute through it
gives:

* a parameter or buffer: the array, which is an argument of the compiled function (see
  ``translate_flat``), so gradients flow to it;
* a submodule: another ModuleValue (a Sequential or ModuleList is also a tuple of its
  submodules, so it can be iterated, indexed and passed to ``len``);
* a tuple of the module's own registered Parameters (the recurrent layers' ``_layer_weights``):
  the tuple of their arrays, each an argument as above;
* ``self.training`` and plain attributes (sizes, flags, strings, tuples): compile-time
  constants; the compiled function is specialised on them (``tree_keys.module_key``);
* a method: inlined with ``self`` bound, as ``forward`` is when the module is called.

A module that is not an argument (a global or closure) is read as a constant: its arrays
become hidden arguments, like global arrays. (The frontend of Modules sits above the frontend,
with the Module classes it reads; it plugs into the frontend through ``frontend/extensions.py``.)
"""
import inspect
import weakref

from ..errors import AdCompileError, TypeMismatchError, UnsupportedSyntaxError
from ..frontend.extensions import register_attribute_handler, register_classifier
from ..frontend.translator.inline import _inline, bind_arguments
from ..frontend.parse import Translator
from ..frontend.translator.tables import until_types_settle
from ..frontend.resolve import UserFunction
from ..frontend.values import NONE, TupleValue
from ..ir.builder import Namer, const
from ..ir.nodes import Var
from ..modules.module import Module
from ..modules.leaves import module_leaves
from ..modules.parameter import Parameter
from ..tree import path_name

_MISSING = object()


class ModuleValue:
    """A Module at compile time. ``leaves`` maps ``id`` of each Parameter and buffer array of
    the module tree that is an argument of the compiled function to its IR variable; it is
    None for a module read as a constant."""

    def __init__(self, module, path, leaves):
        self.module = module
        self.path = path  # "fc1." inside the model: for messages
        self.leaves = leaves

    def describe(self, attr):
        return f"self.{attr}" if not self.path else f"{self.path}{attr}"

    # ---------------------------------------------------------------- attributes
    def attribute(self, tr, attr, node):
        module = self.module
        if attr in module._parameters:
            param = module._parameters[attr]
            return NONE if param is None else self.leaf(tr, param, param.data, attr, node)
        if attr in module._buffers:
            buffer = module._buffers[attr]
            return NONE if buffer is None else self.leaf(tr, buffer, buffer, attr, node)
        if attr in module._modules:
            child = module._modules[attr]
            return NONE if child is None else module_value(child, f"{self.path}{attr}.", self.leaves)
        if attr == "training":
            return const(bool(module.training))
        if attr in module.__dict__:
            return self.plain(tr, module.__dict__[attr], attr, node)
        static = inspect.getattr_static(type(module), attr, _MISSING)
        if static is _MISSING:
            raise tr.error(f"'{type(module).__name__}' object has no attribute '{attr}'", node, AdCompileError)
        if isinstance(static, staticmethod):
            return UserFunction(static.__func__)
        if isinstance(static, property) and static.fget is not None:
            return inline_method(tr, static.fget, self, [], {}, node)
        if inspect.isfunction(static):
            return BoundMethod(self, static)
        return self.plain(tr, static, attr, node)

    def leaf(self, tr, holder, array, attr, node):
        if self.leaves is None:  # a module read as a constant (a global)
            return tr.hidden_array(array, self.describe(attr).replace(".", "_"), node)
        var = self.leaves.get(id(holder))
        if var is None:
            raise tr.error(f"{self.describe(attr)} belongs to a module that is not registered in the model "
                           "(a plain list of modules?): its parameters are not arguments of the compiled "
                           "function; hold submodules in attributes, nn.ModuleList or nn.Sequential",
                           node, AdCompileError)
        return var

    def plain(self, tr, value, attr, node):
        if isinstance(value, Module):
            return module_value(value, f"{self.path}{attr}.", self.leaves)
        if isinstance(value, (list, tuple)) and value and all(isinstance(v, Module) for v in value):
            return TupleValue([module_value(v, f"{self.path}{attr}[{k}].", self.leaves)
                               for k, v in enumerate(value)])
        if _holds_parameters(value):
            return self.parameter_tuple(tr, value, attr, node)
        if isinstance(value, Parameter):
            raise tr.error(f"{self.describe(attr)} is a Parameter that is not registered", node, AdCompileError)
        if isinstance(value, list):
            value = tuple(value)
        try:
            return tr.global_value(value, self.describe(attr), node)
        except TypeMismatchError:
            raise tr.error(f"Module attribute {self.describe(attr)} of {type(self.module).__name__} holds a "
                           f"{type(value).__name__}, which compiled forward code cannot read: only "
                           "parameters, buffers, submodules, numbers, bools, strings, None, tuples, numpy "
                           "arrays and functions can be read through self", node, TypeMismatchError) from None

    def parameter_tuple(self, tr, value, attr, node):
        """A (nested) tuple of this module's registered Parameters (or None), such as the
        ``_layer_weights`` of the recurrent layers: the tuple of their arrays."""
        if isinstance(value, (tuple, list)):
            return TupleValue([self.parameter_tuple(tr, item, attr, node) for item in value])
        if value is None:
            return NONE
        names = [name for name, param in self.module._parameters.items() if param is value]
        if not names:
            raise tr.error(f"{self.describe(attr)} holds a Parameter that is not registered in "
                           f"{type(self.module).__name__}: register it as an attribute", node, AdCompileError)
        return self.leaf(tr, value, value.data, names[0], node)

    # ---------------------------------------------------------------- calling
    def compile_call(self, tr, args, kwargs, node):
        forward = inspect.getattr_static(type(self.module), "forward", None)
        if forward is None or forward is Module.forward:
            raise tr.error(f"{type(self.module).__name__} does not define forward(self, ...)", node,
                           AdCompileError)
        return inline_method(tr, forward, self, args, kwargs, node)


class SequenceModuleValue(ModuleValue, TupleValue):
    """A Sequential or ModuleList: also the tuple of its submodules."""

    def __init__(self, module, path, leaves):
        ModuleValue.__init__(self, module, path, leaves)
        TupleValue.__init__(self, [module_value(child, f"{path}{name}.", leaves)
                                   for name, child in module._modules.items() if child is not None])


def _holds_parameters(value):
    """Whether ``value`` is a tuple (or list), possibly nested, of Parameters and None with at
    least one Parameter."""
    if not isinstance(value, (tuple, list)) or not value:
        return False
    flat, stack = [], list(value)
    while stack:
        item = stack.pop()
        if isinstance(item, (tuple, list)):
            stack.extend(item)
        else:
            flat.append(item)
    return all(item is None or isinstance(item, Parameter) for item in flat) and \
        any(isinstance(item, Parameter) for item in flat)


def module_value(module, path, leaves):
    is_sequence = getattr(type(module), "_adcompile_sequence", False)
    return (SequenceModuleValue if is_sequence else ModuleValue)(module, path, leaves)


class BoundMethod:
    """``self.helper`` before it is called: inlined with ``self`` bound."""

    def __init__(self, owner, function):
        self.owner, self.function = owner, function

    def compile_call(self, tr, args, kwargs, node):
        return inline_method(tr, self.function, self.owner, args, kwargs, node)


def inline_method(tr, function, owner, args, kwargs, node):
    """Inline ``function(owner, *args, **kwargs)`` (see frontend/translator/inline.py). The same method
    may appear nested for different modules (a Sequential in a Sequential); only the same
    method of the same module again is a recursion."""
    key = (function, id(owner.module))
    module_stack = getattr(tr, "module_stack", ())
    if key in module_stack:
        raise tr.error(f"{type(owner.module).__name__}.{function.__name__} calls itself on the same module; "
                       "recursion is not supported", node, UnsupportedSyntaxError)
    stack = getattr(tr, "call_stack", ()) + (getattr(tr, "local_function", None) or tr.pyfunc,)
    values = bind_arguments(tr, function, [owner] + list(args), kwargs, node)
    callee = Translator.__new__(Translator)
    Translator.__init__(callee, function, [], namer=tr.namer, hints=tr.hints)
    callee.user_names, callee.conditional_values = tr.user_names, tr.conditional_values  # for messages
    callee.module_stack = module_stack + (key,)
    return _inline(tr, callee, stack, values, {})


# ---------------------------------------------------------------- hooks
@register_attribute_handler
def _attribute(tr, base, attr, node):
    if isinstance(base, ModuleValue):
        return base.attribute(tr, attr, node)
    if isinstance(base, BoundMethod):
        raise tr.error("attributes of methods are not supported", node, UnsupportedSyntaxError)
    return None


@register_classifier
def _classify(value):
    if isinstance(value, Module):  # a global or closure module: its arrays are constants
        return module_value(value, type(value).__name__ + ".", None)
    return None


# ---------------------------------------------------------------- entry
class ModuleSlot:
    """A Module passed as an argument of the function being compiled: ``leaves`` lists
    (dotted name, holder object, array) per parameter and buffer, in order. The slot
    refers to the module weakly (compiled functions are cached; they must not keep a model
    alive): the leaves' paths are kept, the holders are read from the module when needed."""

    def __init__(self, module, leaves):
        self._module = weakref.ref(module)
        self.leaf_paths = [tuple(name.split(".")) for name, _, _ in leaves]
        self.buffer_indices = [k for k, (_, holder, _) in enumerate(leaves) if not isinstance(holder, Parameter)]

    def names(self, prefix):
        """The leaves' identifiers: the argument's name (or path) and the leaf's path,
        ``model_layers_0_weight`` for ``model.layers[0].weight``."""
        return [path_name(prefix, path) for path in self.leaf_paths]

    @property
    def module(self):
        module = self._module()
        if module is None:
            raise AdCompileError("the model this compiled function was made for has been deleted")
        return module

    @property
    def leaves(self):
        return module_leaves(self.module)


def translate_flat(pyfunc, slots, flat_types, name=None):
    """The IR of ``pyfunc`` whose arguments are given by ``slots`` (a ModuleSlot per Module
    argument, a TreeSlot per pytree argument (``tree_slots.py``), a StaticSlot per static
    argument, None for the others): its parameters are the module leaves (in place of the
    module) and the other arguments, typed by ``flat_types``."""
    hints = {}
    return until_types_settle(
        lambda: _translate(Translator(pyfunc, [], namer=Namer(), hints=hints), slots, list(flat_types), name))


def _translate(tr, slots, flat_types, name):
    names = tr.parameter_names()
    params = []
    types = iter(flat_types)
    for arg_name, slot in zip(names, slots):
        if isinstance(slot, ModuleSlot):
            leaves = {}
            for leaf_name, (_, holder, _) in zip(slot.names(arg_name), slot.leaves):
                var = Var(tr.namer.fresh(leaf_name), next(types))
                leaves[id(holder)] = var
                params.append(var)
            tr.env[arg_name] = module_value(slot.module, "" if arg_name == "self" else arg_name + ".", leaves)
            continue
        if hasattr(slot, "bind"):  # a static argument: a compile-time constant
            tr.env[arg_name] = slot.bind(tr, arg_name)
            continue
        if slot is not None:  # a TreeSlot: one parameter per leaf
            items = [Var(tr.namer.fresh(item_name), next(types)) for item_name in slot.names(arg_name)]
            params += items
            tr.env[arg_name] = slot.frontend_value(items, arg_name)
            continue
        params.append(tr.bind_parameter(arg_name, next(types)))
    return tr.translate_body(params, name)

