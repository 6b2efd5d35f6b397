//! The checker's own type: `tir::Type` plus generic parameters (checked
//! opaquely, before instantiation) and an error type that absorbs every
//! further complaint so one mistake yields one diagnostic.

use crate::tir;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    I64,
    I32,
    U8,
    Bool,
    Unit,
    Str,
    Slice(Box<Ty>),
    Array(Box<Ty>, u64),
    Reusable(Box<Ty>),
    /// Index into the program's struct list (also its `tir::StructId`).
    Struct(u32),
    /// A generic parameter of the function being checked, by name.
    Param(String),
    /// The type of an expression that already produced an error.
    Error,
}

impl Ty {
    pub fn is_integer(&self) -> bool {
        matches!(self, Ty::I64 | Ty::I32 | Ty::U8)
    }
    pub fn is_scalar(&self) -> bool {
        matches!(self, Ty::I64 | Ty::I32 | Ty::U8 | Ty::Bool)
    }
    pub fn is_error(&self) -> bool {
        matches!(self, Ty::Error)
    }
    /// True if this type or any part of it is `Error`.
    pub fn has_error(&self) -> bool {
        match self {
            Ty::Error => true,
            Ty::Slice(t) | Ty::Array(t, _) | Ty::Reusable(t) => t.has_error(),
            _ => false,
        }
    }
    /// True if a generic parameter occurs in this type.
    pub fn has_param(&self) -> bool {
        match self {
            Ty::Param(_) => true,
            Ty::Slice(t) | Ty::Array(t, _) | Ty::Reusable(t) => t.has_param(),
            _ => false,
        }
    }
    /// Names of the generic parameters occurring in this type.
    pub fn params(&self) -> Vec<String> {
        match self {
            Ty::Param(n) => vec![n.clone()],
            Ty::Slice(t) | Ty::Array(t, _) | Ty::Reusable(t) => t.params(),
            _ => Vec::new(),
        }
    }
    /// Nesting depth of the type (bounds generic instantiation).
    pub fn depth(&self) -> u32 {
        match self {
            Ty::Slice(t) | Ty::Array(t, _) | Ty::Reusable(t) => 1 + t.depth(),
            _ => 1,
        }
    }
    /// Element type of a slice, array or reusable slice.
    pub fn element(&self) -> Option<&Ty> {
        match self {
            Ty::Slice(t) | Ty::Array(t, _) | Ty::Reusable(t) => Some(t),
            _ => None,
        }
    }
    /// Replace generic parameters using `subst` (name -> type).
    pub fn subst(&self, subst: &[(String, Ty)]) -> Ty {
        match self {
            Ty::Param(n) => subst
                .iter()
                .find(|(k, _)| k == n)
                .map_or_else(|| self.clone(), |(_, t)| t.clone()),
            Ty::Slice(t) => Ty::Slice(Box::new(t.subst(subst))),
            Ty::Array(t, n) => Ty::Array(Box::new(t.subst(subst)), *n),
            Ty::Reusable(t) => Ty::Reusable(Box::new(t.subst(subst))),
            other => other.clone(),
        }
    }
    /// Two types agree; `Error` agrees with anything.
    pub fn compatible(&self, other: &Ty) -> bool {
        if self.has_error() || other.has_error() {
            return true;
        }
        match (self, other) {
            (Ty::Slice(a), Ty::Slice(b)) | (Ty::Reusable(a), Ty::Reusable(b)) => a.compatible(b),
            (Ty::Array(a, n), Ty::Array(b, m)) => n == m && a.compatible(b),
            _ => self == other,
        }
    }
    /// The backend's type. Generic parameters and errors only occur while
    /// checking opaquely, whose output is discarded, so any stand-in works.
    pub fn to_tir(&self) -> tir::Type {
        match self {
            Ty::I64 | Ty::Param(_) | Ty::Error => tir::Type::I64,
            Ty::I32 => tir::Type::I32,
            Ty::U8 => tir::Type::U8,
            Ty::Bool => tir::Type::Bool,
            Ty::Unit => tir::Type::Unit,
            Ty::Str => tir::Type::Str,
            Ty::Slice(t) => tir::Type::Slice(Box::new(t.to_tir())),
            Ty::Array(t, n) => tir::Type::Array(Box::new(t.to_tir()), *n),
            Ty::Reusable(t) => tir::Type::Reusable(Box::new(t.to_tir())),
            Ty::Struct(id) => tir::Type::Struct(tir::StructId(*id)),
        }
    }
}

/// Bind generic parameters of `pattern` so that it matches `actual`.
/// Returns false on a conflict (`T` bound to two different types).
pub fn unify(pattern: &Ty, actual: &Ty, bindings: &mut Vec<(String, Ty)>) -> bool {
    match (pattern, actual) {
        (_, Ty::Error) => true,
        (Ty::Param(n), _) => match bindings.iter().find(|(k, _)| k == n) {
            Some((_, t)) => t.compatible(actual),
            None => {
                bindings.push((n.clone(), actual.clone()));
                true
            }
        },
        (Ty::Slice(a), Ty::Slice(b)) | (Ty::Reusable(a), Ty::Reusable(b)) => unify(a, b, bindings),
        (Ty::Array(a, n), Ty::Array(b, m)) => n == m && unify(a, b, bindings),
        _ => !pattern.has_param() && pattern.compatible(actual),
    }
}
