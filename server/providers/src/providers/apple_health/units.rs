//! The person's display units, read per record (reference §4, §5.5), turned into vitals' units:
//! kg, km, kcal, °C, mg/dL, % (Apple writes `%` types as fractions of 1), minutes, counts.
//! A unit this table does not know is kept as it came and said (never guessed).

/// A value in the unit Apple wrote, converted to vitals' unit for that kind of quantity, and the
/// unit it is now in. `fraction`: the type is one of Apple's `%` types (0.97 means 97 %).
pub fn convert(value: f64, unit: &str) -> (f64, &'static str) {
    match unit {
        "kg" => (value, "kg"),
        "lb" => (value * 0.453_592_37, "kg"),
        "st" => (value * 6.350_293_18, "kg"),
        "g" => (value / 1000.0, "kg"),
        "km" => (value, "km"),
        "m" => (value / 1000.0, "km"),
        "mi" => (value * 1.609_344, "km"),
        "yd" => (value * 0.000_914_4, "km"),
        "ft" => (value * 0.000_304_8, "km"),
        "cm" => (value / 100_000.0, "km"),
        "kcal" | "Cal" => (value, "kcal"),
        "kJ" => (value / 4.184, "kcal"),
        "degC" => (value, "°C"),
        "degF" => ((value - 32.0) * 5.0 / 9.0, "°C"),
        "%" => (value * 100.0, "%"),
        "mg/dL" => (value, "mg/dL"),
        u if u.starts_with("mmol<") && u.ends_with(">/L") => (value * 18.015_588, "mg/dL"),
        "count/min" => (value, "count/min"),
        "count/s" => (value * 60.0, "count/min"),
        "ms" => (value, "ms"),
        "min" => (value, "min"),
        "hr" => (value * 60.0, "min"),
        "s" => (value / 60.0, "min"),
        "count" => (value, "count"),
        "mmHg" => (value, "mmHg"),
        "mL/min·kg" | "ml/(kg*min)" => (value, "mL/min·kg"),
        _ => (value, ""),
    }
}

/// Whether vitals knows `unit` (else the value is kept as Apple wrote it, and said).
pub fn known(unit: &str) -> bool {
    !convert(1.0, unit).1.is_empty()
}

#[cfg(test)]
mod tests {
    use super::convert;

    #[test]
    fn the_persons_units_become_vitals_units() {
        let near = |a: f64, b: f64| (a - b).abs() < 1e-6;
        assert!(near(convert(150.0, "lb").0, 68.038_855_5));
        assert!(near(convert(98.6, "degF").0, 37.0));
        assert!(near(convert(0.97, "%").0, 97.0));
        assert!(near(convert(1.0, "mi").0, 1.609_344));
        assert!(near(convert(4184.0, "kJ").0, 1000.0));
        assert!(near(convert(5.5, "mmol<180.1558800000541>/L").0, 99.085_734));
        assert_eq!(convert(3.0, "furlong").1, "");
    }
}
