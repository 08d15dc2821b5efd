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

/// A per-text rewrite. Return `Cow::Borrowed` when the text is unchanged.
pub trait TextMapper: Debug + Send + Sync {
    fn map<'a>(&self, text: &'a str) -> Cow<'a, str>;
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

/// Identity of one op instance inside a plan: name plus canonical JSON parameters. Two UDFs are
/// equal when both agree, which keeps DataFusion's common-subexpression logic correct.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UdfIdentity {
    pub name: String,
    pub config: String,
}

/// `text -> text` UDF around a [`TextMapper`]. The output has the input's string type.
#[derive(Debug)]
pub struct MapperUdf {
    id: UdfIdentity,
    mapper: Arc<dyn TextMapper>,
    signature: Signature,
}

impl MapperUdf {
    pub fn new_udf(id: UdfIdentity, mapper: Arc<dyn TextMapper>) -> Arc<ScalarUDF> {
        let udf = MapperUdf {
            id,
            mapper,
            signature: Signature::string(1, Volatility::Immutable),
        };
        Arc::new(ScalarUDF::new_from_impl(udf))
    }

    pub fn identity(&self) -> &UdfIdentity {
        &self.id
    }
}

impl PartialEq for MapperUdf {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}
impl Eq for MapperUdf {}
impl Hash for MapperUdf {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.id.hash(state)
    }
}

impl ScalarUDFImpl for MapperUdf {
    fn name(&self) -> &str {
        &self.id.name
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        Ok(arg_types[0].clone())
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let array = single_array_arg(&args)?;
        Ok(ColumnarValue::Array(map_string_array(
            &array,
            self.mapper.as_ref(),
        )?))
    }
}

/// Applies `mapper` to every non-null value; nulls stay null. Keeps the array's string type.
pub fn map_string_array(array: &ArrayRef, mapper: &dyn TextMapper) -> Result<ArrayRef> {
    let out: ArrayRef = match array.data_type() {
        DataType::Utf8 => {
            let a = array.as_string::<i32>();
            let mut b = GenericStringBuilder::<i32>::with_capacity(a.len(), a.value_data().len());
            a.iter()
                .for_each(|v| b.append_option(v.map(|t| mapper.map(t))));
            Arc::new(b.finish())
        }
        DataType::LargeUtf8 => {
            let a = array.as_string::<i64>();
            let mut b = GenericStringBuilder::<i64>::with_capacity(a.len(), a.value_data().len());
            a.iter()
                .for_each(|v| b.append_option(v.map(|t| mapper.map(t))));
            Arc::new(b.finish())
        }
        DataType::Utf8View => {
            let a = array.as_string_view();
            let mut b = StringViewBuilder::with_capacity(a.len());
            a.iter()
                .for_each(|v| b.append_option(v.map(|t| mapper.map(t))));
            Arc::new(b.finish())
        }
        other => return exec_err!("expected a string column, got {other}"),
    };
    Ok(out)
}

/// `text -> Int64|Float64` UDF around a [`TextStat`].
#[derive(Debug)]
pub struct StatUdf {
    id: UdfIdentity,
    stat: Arc<dyn TextStat>,
    signature: Signature,
}

impl StatUdf {
    pub fn new_udf(id: UdfIdentity, stat: Arc<dyn TextStat>) -> Arc<ScalarUDF> {
        let udf = StatUdf {
            id,
            stat,
            signature: Signature::string(1, Volatility::Immutable),
        };
        Arc::new(ScalarUDF::new_from_impl(udf))
    }

    pub fn identity(&self) -> &UdfIdentity {
        &self.id
    }
}

impl PartialEq for StatUdf {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}
impl Eq for StatUdf {}
impl Hash for StatUdf {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.id.hash(state)
    }
}

impl ScalarUDFImpl for StatUdf {
    fn name(&self) -> &str {
        &self.id.name
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(self.stat.stat_type().data_type())
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let array = single_array_arg(&args)?;
        Ok(ColumnarValue::Array(stat_string_array(
            &array,
            self.stat.as_ref(),
        )?))
    }
}

/// Computes `stat` for every non-null value; nulls give null.
pub fn stat_string_array(array: &ArrayRef, stat: &dyn TextStat) -> Result<ArrayRef> {
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
                // Data-Juicer's stats pass through a ujson round trip before filters see them.
                b.append_option(
                    v.map(|t| crate::py::pyfloat::ujson_roundtrip(stat.compute(t).as_f64())),
                );
            }
            Arc::new(b.finish())
        }
    };
    Ok(out)
}

fn single_array_arg(args: &ScalarFunctionArgs) -> Result<ArrayRef> {
    match args.args.as_slice() {
        [arg] => arg.to_array(args.number_rows),
        _ => exec_err!("expected exactly one argument, got {}", args.args.len()),
    }
}

/// Convenience for tests and benchmarks: apply a mapper to a slice of strings.
pub fn map_all(mapper: &dyn TextMapper, texts: &[&str]) -> Vec<String> {
    texts.iter().map(|t| mapper.map(t).into_owned()).collect()
}

/// A columnar function of a UDF built from a closure: all argument arrays (scalars expanded) ->
/// one output array of the declared type.
pub type ArrayFn = dyn Fn(&[ArrayRef]) -> Result<ArrayRef> + Send + Sync;

/// A UDF over arrays of any type, built from a closure; for the field filters, whose inputs
/// are arbitrary columns rather than text.
pub struct FnUdf {
    id: UdfIdentity,
    /// `None`: the type of the first argument.
    return_type: Option<DataType>,
    f: Arc<ArrayFn>,
    signature: Signature,
}

impl FnUdf {
    pub fn new_udf(
        id: UdfIdentity,
        return_type: Option<DataType>,
        f: Arc<ArrayFn>,
    ) -> Arc<ScalarUDF> {
        Arc::new(ScalarUDF::new_from_impl(FnUdf {
            id,
            return_type,
            f,
            signature: Signature::variadic_any(Volatility::Immutable),
        }))
    }

    pub fn identity(&self) -> &UdfIdentity {
        &self.id
    }
}

impl Debug for FnUdf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FnUdf")
            .field("id", &self.id)
            .field("return_type", &self.return_type)
            .finish()
    }
}

impl PartialEq for FnUdf {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id && self.return_type == other.return_type
    }
}
impl Eq for FnUdf {}
impl Hash for FnUdf {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.id.hash(state)
    }
}

impl ScalarUDFImpl for FnUdf {
    fn name(&self) -> &str {
        &self.id.name
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        match (&self.return_type, arg_types.first()) {
            (Some(t), _) => Ok(t.clone()),
            (None, Some(t)) => Ok(t.clone()),
            (None, None) => exec_err!("{} needs an argument", self.id.name),
        }
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let arrays = args
            .args
            .iter()
            .map(|a| a.to_array(args.number_rows))
            .collect::<Result<Vec<_>>>()?;
        Ok(ColumnarValue::Array((self.f)(&arrays)?))
    }
}
