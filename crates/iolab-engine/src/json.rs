//! What every JSON document iolab writes holds to, whatever made its values.

use serde_json::Value;

/// `v` with every negative zero made 0.0: an empty sum of f64 is -0.0 (`Iterator::sum` starts there),
/// and "-0.0" in a result document reads as a figure below zero.
pub fn positive_zero(v: &mut Value) {
    match v {
        Value::Number(n)
            if n.as_f64() == Some(0.0) && n.as_f64().is_some_and(f64::is_sign_negative) =>
        {
            *v = serde_json::json!(0.0);
        }
        Value::Array(a) => a.iter_mut().for_each(positive_zero),
        Value::Object(m) => m.values_mut().for_each(positive_zero),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_zeros_are_written_as_zero() {
        let mut v = serde_json::json!({"a": -0.0, "b": [-0.0, 1.5, -2.0], "c": 0});
        positive_zero(&mut v);
        assert_eq!(v.to_string(), r#"{"a":0.0,"b":[0.0,1.5,-2.0],"c":0}"#);
    }
}
