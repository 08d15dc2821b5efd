//! Generic DataFusion UDF wrappers: a text mapper (string -> string) and a text stat
//! (string -> Int64/Float64), applied over whole Utf8, LargeUtf8 and Utf8View arrays.

use std::borrow::Cow;
use std::fmt::Debug;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, Float64Builder, GenericStringBuilder, Int64Builder, StringViewBuilder,
};
use arrow::datatypes::DataType;
use datafusion_common::{Result, exec_err};
use datafusion_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};

use crate::spare;

/// A per-text rewrite. Return `Cow::Borrowed` when the text is unchanged.
pub trait TextMapper: Debug + Send + Sync {
    fn map<'a>(&self, text: &'a str) -> Cow<'a, str>;

    /// The mapped values of a whole column at once (`None` for a null), for a mapper with a
    /// faster way than one text at a time; `None` (the default) maps each with [`Self::map`].
    fn map_batch(&self, _texts: &[Option<&str>]) -> Option<Vec<Option<String>>> {
        None
    }
}

/// The value type of a stat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StatType {
    Int64,
    Float64,
}

impl StatType {
    pub fn data_type(self) -> DataType {
        match self {
            StatType::Int64 => DataType::Int64,
            StatType::Float64 => DataType::Float64,
        }
    }
}

/// A per-text stat. `Int64` stats return whole numbers from [`TextStat::compute`] via
/// [`StatValue::Int`].
pub trait TextStat: Debug + Send + Sync {
    fn stat_type(&self) -> StatType;
    fn compute(&self, text: &str) -> StatValue;
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StatValue {
    Int(i64),
    Float(f64),
}

impl StatValue {
    pub fn as_f64(self) -> f64 {
        match self {
            StatValue::Int(i) => i as f64,
            StatValue::Float(f) => f,
        }
    }
}

/// Identity of one op instance inside a plan: the op's name, the UDF's name (the op's name, for
/// some UDFs with a suffix such as `_keep`) and the canonical JSON parameters. Two UDFs are equal
/// when all agree, which keeps DataFusion's common-subexpression logic correct; the wire codec
/// ships it so the receiver rebuilds the op from the registry by name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UdfIdentity {
    pub op: String,
    pub name: String,
    pub config: String,
}

impl UdfIdentity {
    /// The identity of the UDF `<op><suffix>` of the op instance `params` describes.
    pub fn of(params: &crate::params::Params, suffix: &str) -> UdfIdentity {
        UdfIdentity {
            op: params.op().to_string(),
            name: format!("{}{suffix}", params.op()),
            config: params.to_json().to_string(),
        }
    }
}

/// What an operator UDF computes from its argument arrays (scalars already expanded).
pub(crate) trait UdfBody: Debug + Send + Sync {
    fn invoke(&self, args: &[ArrayRef]) -> Result<ArrayRef>;
}

/// Every operator UDF: an identity, a signature, a declared output type and a [`UdfBody`]. One
/// type, so whatever needs an op UDF's identity (the wire codec) asks one downcast.
#[derive(Debug)]
pub struct OpUdf {
    id: UdfIdentity,
    /// `None`: the type of the first argument.
    output: Option<DataType>,
    signature: Signature,
    body: Arc<dyn UdfBody>,
}

impl OpUdf {
    pub(crate) fn new_udf(
        id: UdfIdentity,
        signature: Signature,
        output: Option<DataType>,
        body: Arc<dyn UdfBody>,
    ) -> Arc<ScalarUDF> {
        Arc::new(ScalarUDF::new_from_impl(OpUdf {
            id,
            output,
            signature,
            body,
        }))
    }

    /// `text -> text` around a [`TextMapper`]; the output keeps the input's string type.
    pub fn mapper(id: UdfIdentity, mapper: Arc<dyn TextMapper>) -> Arc<ScalarUDF> {
        Self::new_udf(id, text_signature(), None, Arc::new(MapperBody(mapper)))
    }

    /// `text -> Int64|Float64` around a [`TextStat`].
    pub fn stat(id: UdfIdentity, stat: Arc<dyn TextStat>) -> Arc<ScalarUDF> {
        let output = Some(stat.stat_type().data_type());
        Self::new_udf(id, text_signature(), output, Arc::new(StatBody(stat)))
    }

    /// Over arrays of any type, from a closure: for the field filters and selectors, whose
    /// inputs are arbitrary columns rather than text. `output` `None`: the first argument's type.
    pub fn from_fn(id: UdfIdentity, output: Option<DataType>, f: Arc<ArrayFn>) -> Arc<ScalarUDF> {
        let signature = Signature::variadic_any(Volatility::Immutable);
        Self::new_udf(id, signature, output, Arc::new(FnBody(f)))
    }

    pub(crate) fn identity(&self) -> &UdfIdentity {
        &self.id
    }
}

/// One string argument (Utf8, LargeUtf8 or Utf8View).
pub(crate) fn text_signature() -> Signature {
    Signature::string(1, Volatility::Immutable)
}

impl PartialEq for OpUdf {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id && self.output == other.output
    }
}
impl Eq for OpUdf {}
impl Hash for OpUdf {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.id.hash(state)
    }
}

impl ScalarUDFImpl for OpUdf {
    fn name(&self) -> &str {
        &self.id.name
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        match (&self.output, arg_types.first()) {
            (Some(t), _) | (None, Some(t)) => Ok(t.clone()),
            (None, None) => exec_err!("{} needs an argument", self.id.name),
        }
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let arrays = args
            .args
            .iter()
            .map(|a| a.to_array(args.number_rows))
            .collect::<Result<Vec<_>>>()?;
        Ok(ColumnarValue::Array(self.body.invoke(&arrays)?))
    }
}

/// The one string argument of a text UDF.
pub(crate) fn single_array(args: &[ArrayRef]) -> Result<&ArrayRef> {
    match args {
        [array] => Ok(array),
        _ => exec_err!("expected exactly one argument, got {}", args.len()),
    }
}

#[derive(Debug)]
struct MapperBody(Arc<dyn TextMapper>);

impl UdfBody for MapperBody {
    fn invoke(&self, args: &[ArrayRef]) -> Result<ArrayRef> {
        let mapper = self.0.clone();
        split_if_spare(single_array(args)?, move |a| {
            map_string_array(a, mapper.as_ref())
        })
    }
}

#[derive(Debug)]
struct StatBody(Arc<dyn TextStat>);

impl UdfBody for StatBody {
    fn invoke(&self, args: &[ArrayRef]) -> Result<ArrayRef> {
        let stat = self.0.clone();
        split_if_spare(single_array(args)?, move |a| {
            stat_string_array(a, stat.as_ref())
        })
    }
}

/// `f` over `array`; a batch of at least [`spare::MIN_SPLIT_BYTES`] text bytes is cut in two
/// halves of about equal bytes, and while a core is spare the second half goes to a helper
/// thread ([`spare::join`]). `f` works row by row, so the halves joined are what it gives over
/// the whole.
pub(crate) fn split_if_spare(
    array: &ArrayRef,
    f: impl Fn(&ArrayRef) -> Result<ArrayRef> + Clone + Send + 'static,
) -> Result<ArrayRef> {
    let Some(half) = spare::any().then(|| half_by_bytes(array)).flatten() else {
        return f(array);
    };
    let (first, second) = (array.slice(0, half), array.slice(half, array.len() - half));
    let there = f.clone();
    let (first, second) = spare::join(|| f(&first), move || there(&second));
    Ok(arrow::compute::concat(&[&first?, &second?])?)
}

/// The row that cuts a string array of at least [`spare::MIN_SPLIT_BYTES`] text bytes (and two
/// rows) into halves of about equal bytes.
fn half_by_bytes(array: &ArrayRef) -> Option<usize> {
    if array.len() < 2 {
        return None;
    }
    match array.data_type() {
        DataType::Utf8 => half_of_offsets(array.as_string::<i32>().value_offsets()),
        DataType::LargeUtf8 => half_of_offsets(array.as_string::<i64>().value_offsets()),
        DataType::Utf8View => {
            let lens = array
                .as_string_view()
                .views()
                .iter()
                .map(|v| *v as u32 as usize);
            let total: usize = lens.clone().sum();
            if total < spare::MIN_SPLIT_BYTES {
                return None;
            }
            let half = lens
                .scan(0, |end, len| {
                    *end += len;
                    Some(*end)
                })
                .position(|end| end >= total / 2)?;
            (half + 1 < array.len()).then_some(half + 1)
        }
        _ => None,
    }
}

/// [`half_by_bytes`] of an array with these `offsets` (one more than its rows).
fn half_of_offsets<O: arrow::array::OffsetSizeTrait>(offsets: &[O]) -> Option<usize> {
    let (first, last) = (offsets.first()?.as_usize(), offsets.last()?.as_usize());
    if last - first < spare::MIN_SPLIT_BYTES {
        return None;
    }
    let middle = first + (last - first) / 2;
    // The first row that ends at or after the middle closes the first half.
    let half = offsets[1..].partition_point(|o| o.as_usize() < middle) + 1;
    (half < offsets.len() - 1).then_some(half)
}

struct FnBody(Arc<ArrayFn>);

impl Debug for FnBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FnBody")
    }
}

impl UdfBody for FnBody {
    fn invoke(&self, args: &[ArrayRef]) -> Result<ArrayRef> {
        (self.0)(args)
    }
}

/// Applies `mapper` to every non-null value; nulls stay null. Keeps the array's string type.
pub(crate) fn map_string_array(array: &ArrayRef, mapper: &dyn TextMapper) -> Result<ArrayRef> {
    let texts: Vec<Option<&str>> = match array.data_type() {
        DataType::Utf8 => array.as_string::<i32>().iter().collect(),
        DataType::LargeUtf8 => array.as_string::<i64>().iter().collect(),
        DataType::Utf8View => array.as_string_view().iter().collect(),
        other => return exec_err!("expected a string column, got {other}"),
    };
    let batch = mapper.map_batch(&texts);
    let mapped = |i: usize| -> Option<Cow<'_, str>> {
        match &batch {
            Some(values) => values[i].as_deref().map(Cow::Borrowed),
            None => texts[i].map(|t| mapper.map(t)),
        }
    };
    let out: ArrayRef = match array.data_type() {
        DataType::Utf8 => {
            let a = array.as_string::<i32>();
            let mut b = GenericStringBuilder::<i32>::with_capacity(a.len(), a.value_data().len());
            (0..texts.len()).for_each(|i| b.append_option(mapped(i)));
            Arc::new(b.finish())
        }
        DataType::LargeUtf8 => {
            let a = array.as_string::<i64>();
            let mut b = GenericStringBuilder::<i64>::with_capacity(a.len(), a.value_data().len());
            (0..texts.len()).for_each(|i| b.append_option(mapped(i)));
            Arc::new(b.finish())
        }
        _ => {
            let mut b = StringViewBuilder::with_capacity(texts.len());
            (0..texts.len()).for_each(|i| b.append_option(mapped(i)));
            Arc::new(b.finish())
        }
    };
    Ok(out)
}

/// Computes `stat` for every non-null value; nulls give null.
pub(crate) fn stat_string_array(array: &ArrayRef, stat: &dyn TextStat) -> Result<ArrayRef> {
    let values: Box<dyn Iterator<Item = Option<&str>>> = match array.data_type() {
        DataType::Utf8 => Box::new(array.as_string::<i32>().iter()),
        DataType::LargeUtf8 => Box::new(array.as_string::<i64>().iter()),
        DataType::Utf8View => Box::new(array.as_string_view().iter()),
        other => return exec_err!("expected a string column, got {other}"),
    };
    let out: ArrayRef = match stat.stat_type() {
        StatType::Int64 => {
            let mut b = Int64Builder::with_capacity(array.len());
            for v in values {
                b.append_option(v.map(|t| match stat.compute(t) {
                    StatValue::Int(i) => i,
                    StatValue::Float(f) => f as i64,
                }));
            }
            Arc::new(b.finish())
        }
        StatType::Float64 => {
            let mut b = Float64Builder::with_capacity(array.len());
            for v in values {
                b.append_option(v.map(|t| stat.compute(t).as_f64()));
            }
            Arc::new(b.finish())
        }
    };
    Ok(out)
}

/// A columnar function of a UDF built from a closure: all argument arrays (scalars expanded) ->
/// one output array of the declared type.
pub(crate) type ArrayFn = dyn Fn(&[ArrayRef]) -> Result<ArrayRef> + Send + Sync;

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{LargeStringArray, StringArray, StringViewArray};

    #[derive(Debug)]
    struct Upper;
    impl TextMapper for Upper {
        fn map<'a>(&self, text: &'a str) -> Cow<'a, str> {
            Cow::Owned(text.to_uppercase())
        }
    }

    #[derive(Debug)]
    struct Len;
    impl TextStat for Len {
        fn stat_type(&self) -> StatType {
            StatType::Int64
        }
        fn compute(&self, text: &str) -> StatValue {
            StatValue::Int(text.len() as i64)
        }
    }

    /// Rows of unequal lengths, nulls among them: over 1 MB in all, most bytes in the last rows.
    fn texts() -> Vec<Option<String>> {
        (0..300)
            .map(|i| (i % 7 != 3).then(|| format!("row {i} ").repeat(1 + i * i / 20)))
            .collect()
    }

    #[test]
    fn halves_split_the_bytes_and_leave_small_batches_whole() {
        let texts = texts();
        let utf8: ArrayRef = Arc::new(StringArray::from(texts.clone()));
        let total: usize = texts.iter().flatten().map(String::len).sum();
        assert!(total >= spare::MIN_SPLIT_BYTES);
        let half = half_by_bytes(&utf8).unwrap();
        let first: usize = texts[..half].iter().flatten().map(String::len).sum();
        let before_last: usize = texts[..half - 1].iter().flatten().map(String::len).sum();
        assert!(first >= total / 2 && before_last < total / 2, "{half}");
        for array in [
            Arc::new(LargeStringArray::from(texts.clone())) as ArrayRef,
            Arc::new(StringViewArray::from(texts.clone())),
            utf8.slice(1, 299),
        ] {
            let h = half_by_bytes(&array).unwrap();
            assert!(
                h.abs_diff(half) <= 1,
                "{}: {h} against {half}",
                array.data_type()
            );
        }
        let small: ArrayRef = Arc::new(StringArray::from(vec!["a"; 1000]));
        assert_eq!(half_by_bytes(&small), None);
        let one: ArrayRef = Arc::new(StringArray::from(vec!["x".repeat(2 << 20)]));
        assert_eq!(half_by_bytes(&one), None);
    }

    /// A batch split in halves (the second on a helper thread when one is free) gives what the
    /// whole batch gives, for mappers and stats over every string type.
    #[test]
    fn split_batches_give_the_whole_batch_result() {
        let texts = texts();
        let arrays: [ArrayRef; 3] = [
            Arc::new(StringArray::from(texts.clone())),
            Arc::new(LargeStringArray::from(texts.clone())),
            Arc::new(StringViewArray::from(texts)),
        ];
        spare::set_spare_cores(1);
        for array in &arrays {
            let mapped = split_if_spare(array, |a| map_string_array(a, &Upper)).unwrap();
            assert_eq!(&mapped, &map_string_array(array, &Upper).unwrap());
            let stats = split_if_spare(array, |a| stat_string_array(a, &Len)).unwrap();
            assert_eq!(&stats, &stat_string_array(array, &Len).unwrap());
        }
        spare::set_spare_cores(0);
    }
}
