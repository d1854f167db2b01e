//! Rust data to Python objects through serde, with no JSON text in between: a
//! struct becomes a dict (its fields in order), a sequence a list, a number an
//! int or float. The values are those `json.loads(serde_json::to_string(..))`
//! gave before it: non-finite floats become None, map keys strings, enums
//! serde_json's externally tagged shapes.

use std::fmt;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyInt, PyList, PyString};
use pyo3::IntoPyObjectExt;
use serde::ser::{self, Serialize};

/// `value` as a Python object (dicts, lists, str, int, float, bool, None).
pub fn to_python<'py>(py: Python<'py>, value: &impl Serialize) -> PyResult<Bound<'py, PyAny>> {
    value.serialize(Serializer { py }).map_err(|e| e.0)
}

/// A Python exception raised while building the objects (or a serde error as one).
pub struct Error(PyErr);

impl From<PyErr> for Error {
    fn from(e: PyErr) -> Self {
        Error(e)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl std::error::Error for Error {}

impl ser::Error for Error {
    fn custom<T: fmt::Display>(message: T) -> Self {
        Error(PyRuntimeError::new_err(message.to_string()))
    }
}

type Out<'py> = Result<Bound<'py, PyAny>, Error>;
type Done = Result<(), Error>;

#[derive(Clone, Copy)]
struct Serializer<'py> {
    py: Python<'py>,
}

impl<'py> Serializer<'py> {
    fn any(self, value: impl IntoPyObject<'py>) -> Out<'py> {
        Ok(value.into_bound_py_any(self.py)?)
    }

    /// A float as JSON has it: NaN and infinities are null.
    fn float(self, value: f64) -> Out<'py> {
        if value.is_finite() {
            self.any(value)
        } else {
            Ok(self.py.None().into_bound(self.py))
        }
    }

    /// `{variant: value}`: serde_json's shape of an enum variant with data.
    fn tagged(self, variant: &str, value: Bound<'py, PyAny>) -> Out<'py> {
        let dict = PyDict::new(self.py);
        dict.set_item(variant, value)?;
        Ok(dict.into_any())
    }
}

/// A dict key as serde_json writes it: strings as they are, numbers and
/// booleans as their text.
fn key<'py>(key: Bound<'py, PyAny>) -> Result<Bound<'py, PyString>, Error> {
    if let Ok(text) = key.cast::<PyString>() {
        return Ok(text.clone());
    }
    if let Ok(flag) = key.cast::<PyBool>() {
        return Ok(PyString::new(
            key.py(),
            if flag.is_true() { "true" } else { "false" },
        ));
    }
    if key.is_instance_of::<PyInt>() {
        return Ok(key.str()?);
    }
    Err(ser::Error::custom("key must be a string"))
}

/// The serializer methods of values Python takes as they are (booleans, integers).
macro_rules! numbers {
    ($($method:ident: $type:ty),* $(,)?) => {
        $(fn $method(self, v: $type) -> Out<'py> {
            self.any(v)
        })*
    };
}

/// The serializer method of an enum variant with data (a tuple or a struct variant): `{variant:
/// inner}`, `inner` begun by `start` and filled by the returned builder.
macro_rules! variant {
    ($method:ident, $start:ident, $inner:ty) => {
        fn $method(
            self,
            _name: &'static str,
            _index: u32,
            variant: &'static str,
            len: usize,
        ) -> Result<Variant<$inner>, Error> {
            Ok(Variant {
                variant,
                inner: self.$start(Some(len))?,
            })
        }
    };
}

impl<'py> ser::Serializer for Serializer<'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    type SerializeSeq = Seq<'py>;
    type SerializeTuple = Seq<'py>;
    type SerializeTupleStruct = Seq<'py>;
    type SerializeTupleVariant = Variant<Seq<'py>>;
    type SerializeMap = Map<'py>;
    type SerializeStruct = Map<'py>;
    type SerializeStructVariant = Variant<Map<'py>>;

    numbers! {
        serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32, serialize_i64: i64,
        serialize_i128: i128, serialize_u8: u8, serialize_u16: u16, serialize_u32: u32, serialize_u64: u64,
        serialize_u128: u128,
    }
    fn serialize_f32(self, v: f32) -> Out<'py> {
        // The shortest text of the f32, read as an f64: the value JSON text gave.
        self.float(v.to_string().parse().unwrap_or(f64::NAN))
    }
    fn serialize_f64(self, v: f64) -> Out<'py> {
        self.float(v)
    }
    fn serialize_char(self, v: char) -> Out<'py> {
        self.any(v.to_string())
    }
    fn serialize_str(self, v: &str) -> Out<'py> {
        self.any(v)
    }
    fn serialize_bytes(self, v: &[u8]) -> Out<'py> {
        Ok(PyList::new(self.py, v)?.into_any())
    }
    fn serialize_none(self) -> Out<'py> {
        self.serialize_unit()
    }
    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Out<'py> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Out<'py> {
        Ok(self.py.None().into_bound(self.py))
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Out<'py> {
        self.serialize_unit()
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Out<'py> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Out<'py> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Out<'py> {
        self.tagged(variant, value.serialize(self)?)
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Seq<'py>, Error> {
        Ok(Seq {
            to: self,
            items: Vec::with_capacity(len.unwrap_or(0)),
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<Seq<'py>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<Seq<'py>, Error> {
        self.serialize_seq(Some(len))
    }
    variant!(serialize_tuple_variant, serialize_seq, Seq<'py>);
    fn serialize_map(self, _len: Option<usize>) -> Result<Map<'py>, Error> {
        Ok(Map {
            to: self,
            dict: PyDict::new(self.py),
            key: None,
        })
    }
    fn serialize_struct(self, _name: &'static str, len: usize) -> Result<Map<'py>, Error> {
        self.serialize_map(Some(len))
    }
    variant!(serialize_struct_variant, serialize_map, Map<'py>);
}

/// A list being built.
pub struct Seq<'py> {
    to: Serializer<'py>,
    items: Vec<Bound<'py, PyAny>>,
}

impl<'py> Seq<'py> {
    fn push<T: ?Sized + Serialize>(&mut self, value: &T) -> Done {
        self.items.push(value.serialize(self.to)?);
        Ok(())
    }

    fn list(self) -> Out<'py> {
        Ok(PyList::new(self.to.py, self.items)?.into_any())
    }
}

/// A sequence serializer trait (`SerializeSeq`, `SerializeTuple`, ...) for `Seq`, whose `method`
/// adds an item.
macro_rules! sequence {
    ($trait:ident, $method:ident) => {
        impl<'py> ser::$trait for Seq<'py> {
            type Ok = Bound<'py, PyAny>;
            type Error = Error;
            fn $method<T: ?Sized + Serialize>(&mut self, value: &T) -> Done {
                self.push(value)
            }
            fn end(self) -> Out<'py> {
                self.list()
            }
        }
    };
}

sequence!(SerializeSeq, serialize_element);
sequence!(SerializeTuple, serialize_element);
sequence!(SerializeTupleStruct, serialize_field);

/// A dict being built (a map, or a struct's fields in order).
pub struct Map<'py> {
    to: Serializer<'py>,
    dict: Bound<'py, PyDict>,
    key: Option<Bound<'py, PyString>>,
}

impl<'py> Map<'py> {
    fn set<T: ?Sized + Serialize>(&mut self, name: &str, value: &T) -> Done {
        Ok(self.dict.set_item(name, value.serialize(self.to)?)?)
    }
}

impl<'py> ser::SerializeMap for Map<'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_key<T: ?Sized + Serialize>(&mut self, k: &T) -> Done {
        self.key = Some(key(k.serialize(self.to)?)?);
        Ok(())
    }
    fn serialize_value<T: ?Sized + Serialize>(&mut self, value: &T) -> Done {
        let k = self
            .key
            .take()
            .ok_or_else(|| <Error as ser::Error>::custom("a map value without its key"))?;
        Ok(self.dict.set_item(k, value.serialize(self.to)?)?)
    }
    fn end(self) -> Out<'py> {
        Ok(self.dict.into_any())
    }
}

impl<'py> ser::SerializeStruct for Map<'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, name: &'static str, value: &T) -> Done {
        self.set(name, value)
    }
    fn end(self) -> Out<'py> {
        Ok(self.dict.into_any())
    }
}

/// An enum variant with data, built as `{variant: inner}`.
pub struct Variant<T> {
    variant: &'static str,
    inner: T,
}

impl<'py> ser::SerializeTupleVariant for Variant<Seq<'py>> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, value: &T) -> Done {
        self.inner.push(value)
    }
    fn end(self) -> Out<'py> {
        let to = self.inner.to;
        to.tagged(self.variant, self.inner.list()?)
    }
}

impl<'py> ser::SerializeStructVariant for Variant<Map<'py>> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, name: &'static str, value: &T) -> Done {
        self.inner.set(name, value)
    }
    fn end(self) -> Out<'py> {
        let to = self.inner.to;
        to.tagged(self.variant, self.inner.dict.into_any())
    }
}
