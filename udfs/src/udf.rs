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
        map_string_array(single_array(args)?, self.0.as_ref())
    }
}

#[derive(Debug)]
struct StatBody(Arc<dyn TextStat>);

impl UdfBody for StatBody {
    fn invoke(&self, args: &[ArrayRef]) -> Result<ArrayRef> {
        stat_string_array(single_array(args)?, self.0.as_ref())
    }
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
