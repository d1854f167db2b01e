"""The public Python functions' arguments, checked against their annotations before anything runs:
a value of the wrong kind (None for a path, 5 for a preset name, True for a seed, a list for a
mapping) is one ``ConfigError`` naming the function, the argument, what it expects and what it
found — never a TypeError or AttributeError from deep inside. Ranges (a share from 0 to 1, a seed
below 2⁶⁴) stay each function's own checks.

``@checked`` reads the annotations as written (``int | None`` too, on every supported Python: they
are parsed, not evaluated by Python), the first time the function is called."""

from __future__ import annotations

import ast
import builtins
import collections.abc
import functools
import inspect
import numbers
import os
import sys
import typing
from pathlib import Path
from typing import Any, Callable, Optional, TypeVar, Union

from nandlab._core import ConfigError, TraceError
from nandlab.terminal import shown

__all__ = ["checked", "show_types", "show_types_of", "type_hints"]

Function = TypeVar("Function", bound=Callable[..., Any])

Kind = Optional[tuple[Callable[[Any], bool], str]]
"""What an argument takes: a test of a value and its description (``a whole number``); None where
anything goes (``Any``, or an annotation this module cannot read)."""

_UNREAD = object()
"""An annotation that names something the module does not have at run time."""


def type_hints(function: Callable[..., Any]) -> dict[str, Any]:
    """``function``'s annotations (written lazily, as text) as the types they name, for ``help()``:
    ``typing.get_type_hints``, and on Python 3.9, which cannot evaluate ``X | None``, each ``|`` of
    an annotation read as ``Union`` (NameError for a name the module does not have)."""
    try:
        return typing.get_type_hints(function)
    except TypeError:
        pass

    class Unions(ast.NodeTransformer):
        """``a | b``, at any depth (``Sequence[str | None]``), as ``Union[a, b]``."""

        def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
            self.generic_visit(node)
            if not isinstance(node.op, ast.BitOr):
                return node
            union = ast.Name("__union__", ast.Load())
            return ast.Subscript(union, ast.Tuple([node.left, node.right], ast.Load()), ast.Load())

    names = {**vars(sys.modules[function.__module__]), "__union__": Union}

    def evaluate(text: str) -> Any:
        tree = ast.fix_missing_locations(Unions().visit(ast.parse(text, mode="eval")))
        return eval(compile(tree, "<annotation>", "eval"), names)  # noqa: S307 - the module's own source

    return {name: evaluate(text) if isinstance(text, str) else text
            for name, text in function.__annotations__.items()}


def show_types(module_name: str) -> None:
    """``help()`` of a module's public functions, and of its public classes' methods, shows the types,
    not their names as strings (annotations are written lazily): each resolved with ``type_hints``; an
    annotation naming what its module cannot evaluate keeps its names. A module calls it last."""
    module = sys.modules[module_name]
    show_types_of([getattr(module, name, None) for name in getattr(module, "__all__", ())])


def show_types_of(items: list[Any]) -> None:
    """``show_types`` of these functions and classes (a class: its own annotations, its methods',
    ``__init__``'s of a dataclass too, and its properties')."""
    for item in items:
        if inspect.isfunction(item):
            functions = [item]
        elif inspect.isclass(item):
            functions = [f for f in vars(item).values() if inspect.isfunction(f)]
            functions += [p.fget for p in vars(item).values() if isinstance(p, property) and p.fget]
            try:
                item.__annotations__ = typing.get_type_hints(item)
            except Exception:  # noqa: BLE001 - Python 3.9's `X | None`: its fields' names stay
                pass
        else:
            continue
        for function in functions:
            try:
                function.__annotations__ = type_hints(function)
            except Exception:  # noqa: BLE001 - a name the module has only while type checking: names stay
                pass


def checked(function: Function) -> Function:
    """``function`` with its arguments checked (see the module)."""
    signature = inspect.signature(function)  # the annotations as written (text), which the checks read
    kinds: dict[str, Kind] | None = None
    try:  # help() shows the types, not their names as strings
        function.__annotations__ = type_hints(function)
    except Exception:  # noqa: BLE001 - a name defined further down: the names stay
        pass
    label = f"{function.__module__.replace('nandlab.', '', 1)}.{function.__qualname__}"
    if function.__module__ == "nandlab.api":
        label = f"nandlab.{function.__qualname__}"

    @functools.wraps(function)
    def with_checked_arguments(*args: Any, **kwargs: Any) -> Any:
        nonlocal kinds
        if kinds is None:
            kinds = {name: _kind(_read(p.annotation, function.__globals__)) for name, p in signature.parameters.items()
                     if p.annotation is not p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as error:  # a missing, unknown or repeated argument
            raise ConfigError(f"{label}(): {error}") from None
        for name, value in bound.arguments.items():
            kind = kinds.get(name)
            if kind is not None and not kind[0](value):
                raise ConfigError(f"{label}(): {name}: expected {kind[1]}, found {_found(value)}")
        try:
            return function(*args, **kwargs)
        except (ConfigError, TraceError):
            raise
        except ValueError as error:  # a value out of what the function takes, in its own words
            raise ConfigError(str(error)) from error
        except OverflowError as error:  # a number beyond what the function does with it (too large, or negative)
            raise ConfigError(f"{label}(): a number out of range ({error})") from error
        except (KeyError, IndexError) as error:  # a mapping or list without what nandlab gives it
            raise ConfigError(f"{label}(): an argument is not as nandlab makes it: it lacks "
                              f"{'the key ' if isinstance(error, KeyError) else 'an item '}{error}") from error
        except (TypeError, AttributeError) as error:  # a part of an argument of another kind (a dict's 5)
            raise ConfigError(f"{label}(): an argument is not as nandlab makes it: {error}") from error

    return typing.cast(Function, with_checked_arguments)


def _found(value: Any) -> str:
    """``value`` as the message names it: its type and a short repr."""
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a user's object whose repr fails is still named by its type
        text = "(no repr)"
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        text = f"a {value.bit_length()}-bit number"
    return f"{type(value).__name__} {shown(text if len(text) <= 40 else text[:40] + '…')}"


# --- reading an annotation -----------------------------------------------------------------------


def _read(annotation: Any, names: dict[str, Any]) -> Any:
    """``annotation`` (text under ``from __future__ import annotations``, or an object) as a typing
    object, names looked up in ``names`` (the function's module); ``_UNREAD`` where one is missing."""
    if isinstance(annotation, typing.ForwardRef):
        annotation = annotation.__forward_arg__
    if not isinstance(annotation, str):
        return annotation
    try:
        return _evaluate(ast.parse(annotation, mode="eval").body, names)
    except (SyntaxError, LookupError, TypeError, AttributeError):
        return _UNREAD


def _evaluate(node: ast.expr, names: dict[str, Any]) -> Any:
    """One node of an annotation's syntax tree as the typing object it stands for."""
    if isinstance(node, ast.Constant):
        return _read(node.value, names) if isinstance(node.value, str) else node.value
    if isinstance(node, ast.Name):
        if node.id in names:
            return names[node.id]
        return getattr(builtins, node.id) if hasattr(builtins, node.id) else getattr(typing, node.id)
    if isinstance(node, ast.Attribute):
        return getattr(_evaluate(node.value, names), node.attr)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return Union[_evaluate(node.left, names), _evaluate(node.right, names)]
    if isinstance(node, ast.Subscript):
        base = _evaluate(node.value, names)
        inner = node.slice.value if isinstance(node.slice, ast.Index) else node.slice  # type: ignore[attr-defined]
        items = tuple(_evaluate(e, names) for e in inner.elts) if isinstance(inner, ast.Tuple) else _evaluate(inner, names)
        if base is typing.Literal:
            return typing.Literal[items]
        return base[items]
    if isinstance(node, ast.List):  # Callable[[...], R]
        return [_evaluate(e, names) for e in node.elts]
    raise TypeError(f"cannot read {ast.dump(node)}")


# --- what an annotation accepts ------------------------------------------------------------------


def _kind(annotation: Any) -> Kind:
    """The test and description of what ``annotation`` accepts; None for anything."""
    if annotation is _UNREAD or annotation is Any or isinstance(annotation, TypeVar):
        return None
    if annotation is None or annotation is type(None):
        return (lambda v: v is None), "None"
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Union:
        kinds = [_kind(a) for a in args]
        if any(k is None for k in kinds):
            return None
        tests = [k[0] for k in kinds if k is not None]
        texts = [k[1] for k in kinds if k is not None]
        return (lambda v: any(t(v) for t in tests)), " or ".join(dict.fromkeys(texts))
    if origin is typing.Literal:
        return (lambda v: any(v == a and type(v) is type(a) for a in args)), " or ".join(repr(a) for a in args)
    if origin is collections.abc.Callable or annotation is collections.abc.Callable or annotation is Callable:
        return callable, "a function"
    if origin is not None:
        return _container(origin, args)
    if isinstance(annotation, type):
        return _class(annotation)
    return None


_SIMPLE: dict[type, tuple[Callable[[Any], bool], str]] = {
    bool: (lambda v: isinstance(v, (bool, _numpy_bool())), "True or False"),
    int: (lambda v: isinstance(v, numbers.Integral) and not isinstance(v, (bool, _numpy_bool())), "a whole number"),
    float: (lambda v: isinstance(v, numbers.Real) and not isinstance(v, (bool, _numpy_bool())), "a number"),
    str: (lambda v: isinstance(v, str), "text (a str)"),
    bytes: (lambda v: isinstance(v, bytes), "bytes"),
    os.PathLike: (lambda v: isinstance(v, (str, os.PathLike)), "a path"),
    Path: (lambda v: isinstance(v, Path), "a pathlib.Path"),
}


def _numpy_bool() -> type:
    """NumPy's bool (a number to ``numbers``, True or False to a reader), or bool without NumPy."""
    numpy = sys.modules.get("numpy")
    return numpy.bool_ if numpy is not None else bool


def _class(annotation: type) -> Kind:
    if annotation in _SIMPLE:
        return _SIMPLE[annotation]
    if annotation is object:
        return None
    return (lambda v: isinstance(v, annotation)), f"a {annotation.__name__}"


def _container(origin: Any, args: tuple[Any, ...]) -> Kind:
    """``list[int]``, ``Sequence[str]``, ``Mapping[str, Any]``, ``tuple[int, int]``, ``os.PathLike[str]`` …"""
    if origin is os.PathLike:
        return _SIMPLE[os.PathLike]
    if not isinstance(origin, type):
        return None
    name = {collections.abc.Sequence: "a sequence", collections.abc.Collection: "a collection",
            collections.abc.Mapping: "a mapping", collections.abc.Iterable: "an iterable"}.get(origin, f"a {origin.__name__}")
    if issubclass(origin, collections.abc.Mapping):
        key, value = (_kind(a) for a in args) if len(args) == 2 else (None, None)

        def test(v: Any) -> bool:
            return isinstance(v, origin) and all((key is None or key[0](k)) and (value is None or value[0](x))
                                                 for k, x in v.items())

        of = f" of {key[1] if key else 'keys'} to {value[1] if value else 'values'}" if key or value else ""
        return test, name + of
    if origin is tuple and args and args[-1] is not Ellipsis:
        items = [_kind(a) for a in args]
        return (lambda v: isinstance(v, tuple) and len(v) == len(items)
                and all(k is None or k[0](x) for k, x in zip(items, v))), f"a tuple of {len(items)}"
    item = _kind(args[0]) if args else None

    # A sequence or collection is anything sized that gives its items (a NumPy array, a polars Series).
    loose = origin in (collections.abc.Sequence, collections.abc.Collection, collections.abc.Iterable)

    def test_items(v: Any) -> bool:
        if loose:
            if isinstance(v, (str, bytes, collections.abc.Mapping)) or not isinstance(v, collections.abc.Iterable) \
                    or not hasattr(v, "__len__"):
                return False
        elif not isinstance(v, origin):
            return False
        return item is None or all(item[0](x) for x in v)

    return test_items, name + (f" of {item[1]}" if item else "")
