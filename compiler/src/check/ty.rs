//! The checker's own type: `tir::Type` plus generic parameters (checked
//! opaquely, before instantiation) and an error type that absorbs every
//! further complaint so one mistake yields one diagnostic.

use crate::tir;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    I64,
    I32,
    U8,
    U64,
    Bool,
    Unit,
    Str,
    Slice(Box<Ty>),
    Array(Box<Ty>, u64),
    Reusable(Box<Ty>),
    /// A struct: the index of its declaration in the checker's struct list,
    /// and its type arguments (empty unless the struct is generic). The
    /// backend's `tir::StructId` of an instance is assigned when it is first
    /// lowered (`Checker::tir_ty`).
    Struct(u32, Vec<Ty>),
    /// A generic parameter of the function being checked, by name.
    Param(String),
    /// The type of an expression that already produced an error.
    Error,
}

impl Ty {
    pub fn is_integer(&self) -> bool {
        matches!(self, Ty::I64 | Ty::I32 | Ty::U8 | Ty::U64)
    }
    pub fn is_scalar(&self) -> bool {
        matches!(self, Ty::I64 | Ty::I32 | Ty::U8 | Ty::U64 | Ty::Bool)
    }
    /// An integer type, or a generic parameter: a generic body is checked
    /// once with its parameters opaque, admitting at `T` what an integer
    /// type admits (operators, literals, casts); each instance is then
    /// checked with its own types, where a `T` that is not one is an error.
    pub fn may_be_integer(&self) -> bool {
        self.is_integer() || matches!(self, Ty::Param(_))
    }
    /// A scalar type, or a generic parameter (as for [`Ty::may_be_integer`]).
    pub fn may_be_scalar(&self) -> bool {
        self.is_scalar() || matches!(self, Ty::Param(_))
    }
    pub fn is_error(&self) -> bool {
        matches!(self, Ty::Error)
    }
    /// True if this type or any part of it is `Error`.
    pub fn has_error(&self) -> bool {
        match self {
            Ty::Error => true,
            Ty::Slice(t) | Ty::Array(t, _) | Ty::Reusable(t) => t.has_error(),
            Ty::Struct(_, args) => args.iter().any(Ty::has_error),
            _ => false,
        }
    }
    /// True if a generic parameter occurs in this type.
    pub fn has_param(&self) -> bool {
        match self {
            Ty::Param(_) => true,
            Ty::Slice(t) | Ty::Array(t, _) | Ty::Reusable(t) => t.has_param(),
            Ty::Struct(_, args) => args.iter().any(Ty::has_param),
            _ => false,
        }
    }
    /// Names of the generic parameters occurring in this type.
    pub fn params(&self) -> Vec<String> {
        match self {
            Ty::Param(n) => vec![n.clone()],
            Ty::Slice(t) | Ty::Array(t, _) | Ty::Reusable(t) => t.params(),
            Ty::Struct(_, args) => args.iter().flat_map(Ty::params).collect(),
            _ => Vec::new(),
        }
    }
    /// Whether the type is past the bounds on generic instantiation: nested
    /// deeper than `MAX_TYPE_DEPTH`, or more than `MAX_TYPE_NODES` types in
    /// its tree (`P<P<u8, u8>, P<u8, u8>>` doubles with each level within
    /// the depth bound: thirty `let`s that each wrap the last one twice took
    /// `tern check` to an allocation failure).
    pub fn nests_too_deep(&self) -> bool {
        let mut budget = super::MAX_TYPE_NODES;
        !self.within(&mut budget) || self.depth() > super::MAX_TYPE_DEPTH
    }
    /// The number of types in the type's tree (at most `MAX_TYPE_NODES`
    /// plus one for a type that passed the bound).
    pub fn nodes(&self) -> u32 {
        let mut budget = super::MAX_TYPE_NODES + 1;
        self.within(&mut budget);
        super::MAX_TYPE_NODES + 1 - budget
    }
    /// Counts the type's nodes against `budget`: false once it runs out
    /// (so a huge type costs no more than the budget to refuse).
    fn within(&self, budget: &mut u32) -> bool {
        if *budget == 0 {
            return false;
        }
        *budget -= 1;
        match self {
            Ty::Slice(t) | Ty::Array(t, _) | Ty::Reusable(t) => t.within(budget),
            Ty::Struct(_, args) => args.iter().all(|a| a.within(budget)),
            _ => true,
        }
    }
    /// Nesting depth of the type (bounds generic instantiation).
    pub fn depth(&self) -> u32 {
        match self {
            Ty::Slice(t) | Ty::Array(t, _) | Ty::Reusable(t) => 1 + t.depth(),
            Ty::Struct(_, args) => 1 + args.iter().map(Ty::depth).max().unwrap_or(0),
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
            Ty::Struct(s, args) => Ty::Struct(*s, args.iter().map(|a| a.subst(subst)).collect()),
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
            (Ty::Struct(s, a), Ty::Struct(t, b)) => {
                s == t && a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.compatible(y))
            }
            _ => self == other,
        }
    }
    /// The backend's type, with `struct_id` giving the id of each struct
    /// instance (`Checker::tir_ty`). Generic parameters and errors only occur
    /// while checking opaquely, whose output is discarded, so any stand-in
    /// works (`i64`).
    pub fn to_tir(&self, struct_id: &mut impl FnMut(u32, &[Ty]) -> tir::StructId) -> tir::Type {
        match self {
            Ty::I64 | Ty::Param(_) | Ty::Error => tir::Type::I64,
            Ty::I32 => tir::Type::I32,
            Ty::U8 => tir::Type::U8,
            Ty::U64 => tir::Type::U64,
            Ty::Bool => tir::Type::Bool,
            Ty::Unit => tir::Type::Unit,
            Ty::Str => tir::Type::Str,
            Ty::Slice(t) => tir::Type::Slice(Box::new(t.to_tir(struct_id))),
            Ty::Array(t, n) => tir::Type::Array(Box::new(t.to_tir(struct_id)), *n),
            Ty::Reusable(t) => tir::Type::Reusable(Box::new(t.to_tir(struct_id))),
            Ty::Struct(s, args) => tir::Type::Struct(struct_id(*s, args)),
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
        (Ty::Struct(s, a), Ty::Struct(t, b)) if s == t && a.len() == b.len() => {
            a.iter().zip(b).all(|(x, y)| unify(x, y, bindings))
        }
        _ => !pattern.has_param() && pattern.compatible(actual),
    }
}

/// `ty` with every generic parameter (and error) replaced by `i64`: the
/// stand-in opaque checking lowers them to (see [`Ty::to_tir`]).
pub fn concrete(ty: &Ty) -> Ty {
    match ty {
        Ty::Param(_) | Ty::Error => Ty::I64,
        Ty::Slice(t) => Ty::Slice(Box::new(concrete(t))),
        Ty::Array(t, n) => Ty::Array(Box::new(concrete(t)), *n),
        Ty::Reusable(t) => Ty::Reusable(Box::new(concrete(t))),
        Ty::Struct(s, args) => Ty::Struct(*s, args.iter().map(concrete).collect()),
        other => other.clone(),
    }
}
