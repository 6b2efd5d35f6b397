//! The arithmetic of the report: medians, side/builtin ratios and their
//! geometric mean. Kept apart from measuring so it can be tested exactly.

/// The median of `xs` (mean of the two middle values for an even count);
/// `None` when empty or when any value is not finite.
pub fn median(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() || xs.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// `side / builtin`, smaller is better; `None` when either is missing or the
/// builtin figure is not positive.
pub fn ratio(side: Option<f64>, builtin: Option<f64>) -> Option<f64> {
    match (side, builtin) {
        (Some(s), Some(b)) if b > 0.0 && s >= 0.0 => Some(s / b),
        _ => None,
    }
}

/// The geometric mean of positive ratios; `None` when empty or any ratio is
/// not positive (a summary over fewer cases than asked would mislead).
pub fn geometric_mean(rs: &[f64]) -> Option<f64> {
    if rs.is_empty()
        || rs
            .iter()
            .any(|r| r.is_nan() || *r <= 0.0 || r.is_infinite())
    {
        return None;
    }
    Some((rs.iter().map(|r| r.ln()).sum::<f64>() / rs.len() as f64).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_odd_even_and_unsorted() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[7.0]), Some(7.0));
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[1.0, f64::NAN]), None);
    }

    #[test]
    fn ratio_is_side_over_builtin() {
        assert_eq!(ratio(Some(3.0), Some(2.0)), Some(1.5));
        assert_eq!(ratio(Some(1.0), Some(0.0)), None);
        assert_eq!(ratio(None, Some(2.0)), None);
        assert_eq!(ratio(Some(2.0), None), None);
    }

    #[test]
    fn geometric_mean_of_ratios() {
        assert_eq!(geometric_mean(&[2.0, 0.5]), Some(1.0));
        let g = geometric_mean(&[1.0, 2.0, 4.0]).unwrap();
        assert!((g - 2.0).abs() < 1e-12, "{g}");
        let g = geometric_mean(&[0.9, 1.1, 1.0, 1.2, 0.8, 1.05]).unwrap();
        assert!((g - 0.999_653_03).abs() < 1e-8, "{g}");
        assert_eq!(geometric_mean(&[]), None);
        assert_eq!(geometric_mean(&[1.0, 0.0]), None);
        assert_eq!(geometric_mean(&[1.0, -1.0]), None);
    }
}
