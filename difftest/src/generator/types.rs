//! The generator's model of Tern types: what it generates values of, their
//! source spelling, and their C layout (docs/language.md, section 4), which
//! the generated programs assert against `size_of`.

/// A Tern type the generator knows.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    /// `i64`
    I64,
    /// `i32`
    I32,
    /// `u8`
    U8,
    /// `u64`
    U64,
    /// `bool`
    Bool,
    /// `[N]T`
    Array(Box<Ty>, i64),
    /// A generated struct, by index (named `S{index}`).
    Struct(usize),
    /// `[]T`
    Slice(Box<Ty>),
    /// `reusable[]T`
    Reusable(Box<Ty>),
}

/// The integer types, in the order the generator picks from.
pub const INTS: [Ty; 4] = [Ty::I64, Ty::I32, Ty::U8, Ty::U64];

/// A generated struct.
#[derive(Clone, Debug)]
pub struct StructDef {
    /// `S0`, `S1`, ...
    pub name: String,
    /// Field names and types, in declaration order.
    pub fields: Vec<(String, Ty)>,
}

impl Ty {
    /// `i64`, `i32`, `u8` or `u64`.
    pub fn is_int(&self) -> bool {
        matches!(self, Ty::I64 | Ty::I32 | Ty::U8 | Ty::U64)
    }

    /// An integer or `bool`.
    pub fn is_scalar(&self) -> bool {
        self.is_int() || *self == Ty::Bool
    }

    /// Width in bits of an integer type.
    pub fn bits(&self) -> u32 {
        match self {
            Ty::I64 | Ty::U64 => 64,
            Ty::I32 => 32,
            Ty::U8 => 8,
            _ => panic!("bits of non-integer {self:?}"),
        }
    }

    /// Smallest value of an integer type.
    pub fn min(&self) -> i128 {
        match self {
            Ty::I64 => i64::MIN.into(),
            Ty::I32 => i32::MIN.into(),
            Ty::U8 | Ty::U64 => 0,
            _ => panic!("min of non-integer {self:?}"),
        }
    }

    /// Largest value of an integer type.
    pub fn max(&self) -> i128 {
        match self {
            Ty::I64 => i64::MAX.into(),
            Ty::I32 => i32::MAX.into(),
            Ty::U8 => u8::MAX.into(),
            Ty::U64 => u64::MAX.into(),
            _ => panic!("max of non-integer {self:?}"),
        }
    }

    /// Wraps `v` into the type's range (two's complement), as run-time
    /// arithmetic does.
    pub fn wrap(&self, v: i128) -> i128 {
        match self {
            Ty::I64 => i128::from(v as i64),
            Ty::I32 => i128::from(v as i32),
            Ty::U8 => i128::from(v as u8),
            Ty::U64 => i128::from(v as u64),
            _ => panic!("wrap of non-integer {self:?}"),
        }
    }

    /// The element type of an array, slice or reusable slice.
    pub fn elem(&self) -> Option<&Ty> {
        match self {
            Ty::Array(e, _) | Ty::Slice(e) | Ty::Reusable(e) => Some(e),
            _ => None,
        }
    }

    /// The source spelling, array lengths as numbers.
    pub fn src(&self, structs: &[StructDef]) -> String {
        match self {
            Ty::I64 => "i64".into(),
            Ty::I32 => "i32".into(),
            Ty::U8 => "u8".into(),
            Ty::U64 => "u64".into(),
            Ty::Bool => "bool".into(),
            Ty::Array(e, n) => format!("[{n}]{}", e.src(structs)),
            Ty::Struct(k) => structs[*k].name.clone(),
            Ty::Slice(e) => format!("[]{}", e.src(structs)),
            Ty::Reusable(e) => format!("reusable[]{}", e.src(structs)),
        }
    }

    /// `(size, align)` in bytes, following the C layout rules of the language.
    pub fn layout(&self, structs: &[StructDef]) -> (i64, i64) {
        match self {
            Ty::I64 | Ty::U64 => (8, 8),
            Ty::I32 => (4, 4),
            Ty::U8 | Ty::Bool => (1, 1),
            Ty::Array(e, n) => {
                let (s, a) = e.layout(structs);
                (s * n, a)
            }
            Ty::Slice(_) | Ty::Reusable(_) => (16, 8),
            Ty::Struct(k) => {
                let mut off = 0;
                let mut align = 1;
                for (_, f) in &structs[*k].fields {
                    let (s, a) = f.layout(structs);
                    off = round_up(off, a) + s;
                    align = align.max(a);
                }
                (round_up(off, align), align)
            }
        }
    }

    /// Size in bytes.
    pub fn size(&self, structs: &[StructDef]) -> i64 {
        self.layout(structs).0
    }

    /// Whether a value of this type contains a value of type `t` reachable
    /// by field access and indexing (itself included); `indexable` says
    /// whether slices and reusable slices may be entered.
    pub fn contains(&self, t: &Ty, structs: &[StructDef]) -> bool {
        if self == t {
            return true;
        }
        match self {
            Ty::Array(e, n) => *n > 0 && e.contains(t, structs),
            Ty::Slice(e) | Ty::Reusable(e) => e.contains(t, structs),
            Ty::Struct(k) => structs[*k]
                .fields
                .iter()
                .any(|(_, f)| f.contains(t, structs)),
            _ => false,
        }
    }

    /// Whether the type contains any array of length zero or slice (values
    /// the generator cannot build literals of freely).
    pub fn has_view(&self, structs: &[StructDef]) -> bool {
        match self {
            Ty::Slice(_) | Ty::Reusable(_) => true,
            Ty::Array(e, _) => e.has_view(structs),
            Ty::Struct(k) => structs[*k].fields.iter().any(|(_, f)| f.has_view(structs)),
            _ => false,
        }
    }
}

/// `v` rounded up to a multiple of `a` (`a > 0`).
pub fn round_up(v: i64, a: i64) -> i64 {
    (v + a - 1) / a * a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_layout() {
        let structs = vec![
            StructDef {
                name: "S0".into(),
                fields: vec![
                    ("a".into(), Ty::U8),
                    ("b".into(), Ty::I64),
                    ("c".into(), Ty::Bool),
                ],
            },
            StructDef {
                name: "S1".into(),
                fields: vec![
                    ("x".into(), Ty::Array(Box::new(Ty::U8), 16)),
                    ("y".into(), Ty::I32),
                    ("z".into(), Ty::Array(Box::new(Ty::Struct(0)), 0)),
                ],
            },
        ];
        assert_eq!(Ty::Struct(0).layout(&structs), (24, 8));
        // The grid example of docs/language.md: 16 bytes, then an i32; the
        // empty array of S0 still aligns the struct to 8.
        assert_eq!(Ty::Struct(1).layout(&structs), (24, 8));
        assert_eq!(Ty::Slice(Box::new(Ty::U8)).layout(&structs), (16, 8));
    }

    #[test]
    fn wrapping() {
        assert_eq!(Ty::U8.wrap(256 + 3), 3);
        assert_eq!(Ty::I32.wrap(i128::from(i32::MAX) + 1), i128::from(i32::MIN));
        assert_eq!(Ty::U8.wrap(-1), 255);
        assert_eq!(Ty::U64.wrap(-1), u64::MAX.into());
        assert_eq!(Ty::U64.wrap(i128::from(u64::MAX) + 2), 1);
    }
}
