/**
 * The ClickHouse functions public SQL may call (compared lowercased; ClickHouse itself resolves the
 * exact spelling). Everything else is refused, which is how table functions, dictionaries, file and
 * URL readers and functions that reveal server state (hostName, currentUser, getSetting, version,
 * uptime, ...) stay out: they are simply not here. Keep this list to pure functions of their
 * arguments.
 */

const AGGREGATES = [
  'count', 'sum', 'avg', 'min', 'max', 'any', 'anylast', 'argmin', 'argmax', 'uniq', 'uniqexact', 'uniqcombined', 'uniqhll12',
  'median', 'medianexact', 'quantile', 'quantiles', 'quantileexact', 'quantilesexact', 'quantiletdigest', 'quantilestdigest',
  'quantiletiming', 'quantilestiming', 'quantileexactweighted', 'stddevpop', 'stddevsamp', 'varpop', 'varsamp', 'corr', 'covarpop',
  'covarsamp', 'groupArray', 'groupuniqarray', 'grouparraysorted', 'topk', 'topkweighted', 'histogram', 'summap', 'minmap', 'maxmap',
  'uniqupto', 'sumwithoverflow', 'avgweighted', 'grouparrayinsertat', 'groupbitand', 'groupbitor', 'groupbitxor', 'stddevpopstable',
  'boundingratio', 'simplelinearregression', 'entropy', 'skewpop', 'skewsamp', 'kurtpop', 'kurtsamp', 'first_value', 'last_value',
  'countif', 'sumif', 'avgif', 'minif', 'maxif', 'uniqif', 'uniqexactif', 'anyif', 'argminif', 'argmaxif', 'quantileif', 'quantilesif',
  'quantileexactif', 'medianif', 'grouparrayif', 'groupuniqarrayif', 'topkif',
  'sumarray', 'avgarray', 'countarray', 'grouparrayarray', 'groupuniqarrayarray', 'uniqarray', 'minarray', 'maxarray',
  'sumdistinct', 'countdistinct', 'avgdistinct', 'uniqexactdistinct', 'sumorNull', 'avgornull', 'minornull', 'maxornull',
  'sumordefault', 'avgordefault',
];

const WINDOW = ['row_number', 'rank', 'dense_rank', 'percent_rank', 'cume_dist', 'ntile', 'lag', 'lead', 'laginframe', 'leadinframe', 'nth_value'];

const CONDITIONAL_AND_NULLS = ['if', 'multiif', 'coalesce', 'ifnull', 'nullif', 'isnull', 'isnotnull', 'assumenotnull', 'tonullable', 'greatest', 'least', 'isfinite', 'isinfinite', 'isnan'];

const MATH = [
  'abs', 'round', 'roundbankers', 'floor', 'ceil', 'ceiling', 'trunc', 'truncate', 'sqrt', 'cbrt', 'exp', 'exp2', 'exp10', 'log', 'ln', 'log2', 'log10',
  'log1p', 'pow', 'power', 'sign', 'intdiv', 'intdivorzero', 'modulo', 'mod', 'negate', 'plus', 'minus', 'multiply', 'divide', 'gcd', 'lcm',
  'sin', 'cos', 'tan', 'asin', 'acos', 'atan', 'atan2', 'pi', 'e', 'roundtoexp2', 'rounddown', 'floor', 'bitand', 'bitor', 'bitxor',
];

const CONVERSION = [
  'tostring', 'tofixedstring', 'toint8', 'toint16', 'toint32', 'toint64', 'touint8', 'touint16', 'touint32', 'touint64', 'tofloat32', 'tofloat64',
  'todecimal32', 'todecimal64', 'toint64ornull', 'tofloat64ornull', 'toint64orzero', 'tofloat64orzero', 'touint64orzero', 'touint64ornull',
  'todate', 'todate32', 'todatetime', 'todatetime64', 'todateornull', 'todatetimeornull', 'todatetime64ornull', 'parsedatetimebesteffort',
  'parsedatetimebesteffortornull', 'parsedatetime64besteffort', 'parsedatetime64besteffortornull', 'tobool', 'reinterpretasstring', 'touuid',
  'touuidornull', 'tointervalsecond', 'tointervalminute', 'tointervalhour', 'tointervalday', 'tointervalweek', 'tointervalmonth',
  'tointervalmillisecond', 'todecimalstring', 'formatreadablesize', 'formatreadablequantity', 'formatreadabletimedelta',
];

const DATES = [
  'now', 'now64', 'today', 'yesterday', 'tostartofminute', 'tostartoffiveminutes', 'tostartoftenminutes', 'tostartoffifteenminutes',
  'tostartofhour', 'tostartofday', 'tostartofweek', 'tostartofmonth', 'tostartofquarter', 'tostartofyear', 'tostartofinterval',
  'tostartofsecond', 'tomonday', 'totime', 'toyear', 'toquarter', 'tomonth', 'todayofmonth', 'todayofweek', 'todayofyear', 'tohour',
  'tominute', 'tosecond', 'tounixtimestamp', 'tounixtimestamp64milli', 'fromunixtimestamp', 'fromunixtimestamp64milli', 'datediff',
  'date_diff', 'dateadd', 'date_add', 'datesub', 'date_sub', 'date_trunc', 'datetrunc', 'addseconds', 'addminutes', 'addhours', 'adddays',
  'addweeks', 'addmonths', 'subtractseconds', 'subtractminutes', 'subtracthours', 'subtractdays', 'subtractweeks', 'subtractmonths',
  'formatdatetime', 'toyyyymm', 'toyyyymmdd', 'toiso8601', 'toisoweek', 'toisoyear', 'totimezone', 'age', 'timeslot', 'toyearweek',
  'tolastdayofmonth', 'torelativehournum', 'torelativedaynum', 'torelativeminutenum', 'extract',
];

const STRINGS = [
  'length', 'lengthutf8', 'char_length', 'empty', 'notempty', 'lower', 'upper', 'lowerutf8', 'upperutf8', 'concat', 'concat_ws', 'concatwithseparator',
  'substring', 'substr', 'substringutf8', 'left', 'right', 'leftutf8', 'rightutf8', 'trim', 'trimboth', 'trimleft', 'trimright', 'ltrim', 'rtrim',
  'replace', 'replaceall', 'replaceone', 'replaceregexpall', 'replaceregexpone', 'position', 'positioncaseinsensitive', 'positionutf8',
  'positioncaseinsensitiveutf8', 'locate', 'startswith', 'endswith', 'like', 'ilike', 'notlike', 'notilike', 'match', 'extract', 'extractall',
  'multisearchanyutf8', 'multisearchanycaseinsensitiveutf8', 'multisearchallpositionscaseinsensitiveutf8',
  'multisearchany', 'multisearchfirstindex', 'countsubstrings', 'splitbychar', 'splitbystring', 'splitbyregexp', 'arraystringconcat',
  'reverse', 'reverseutf8', 'repeat', 'leftpad', 'rightpad', 'lpad', 'rpad', 'format', 'tovalidutf8', 'base64encode', 'base64decode',
  'hex', 'unhex', 'md5', 'sipHash64', 'cityhash64', 'xxhash64', 'murmurhash3_64', 'lowcardinalityindices', 'normalizequery', 'domain',
  'domainwithoutwww', 'topleveldomain', 'path', 'protocol', 'extracturlparameter', 'cutquerystring', 'ngramdistance', 'levenshteindistance',
  'editdistance', 'damerauLevenshteinDistance', 'jarowinklersimilarity', 'initcap', 'initcaputf8', 'trimboth',
];

const ARRAYS_MAPS_TUPLES = [
  'array', 'has', 'hasany', 'hasall', 'indexof', 'countequal', 'arrayjoin', 'arraycount', 'arraysum', 'arrayavg', 'arraymin', 'arraymax',
  'arraysort', 'arrayreversesort', 'arraydistinct', 'arrayuniq', 'arrayconcat', 'arrayslice', 'arrayelement', 'arrayreverse',
  'arraycompact', 'arrayflatten', 'arrayintersect', 'arrayenumerate', 'arrayenumerateuniq', 'arraypushback', 'arraypushfront',
  'arraypopback', 'arraypopfront', 'arrayresize', 'arraystringconcat', 'arrayzip', 'arrayproduct', 'arraycumsum', 'arraydifference',
  'arrayfirst', 'arraylast', 'arrayshingles', 'length', 'emptyarraystring', 'map', 'mapkeys', 'mapvalues', 'mapcontains', 'mapcontainskey',
  'mapfromarrays', 'mapupdate', 'tuple', 'tupleelement', 'untuple', 'arrayelementornull',
];

const JSON_FUNCTIONS = [
  'jsonextract', 'jsonextractstring', 'jsonextractint', 'jsonextractuint', 'jsonextractfloat', 'jsonextractbool', 'jsonextractraw',
  'jsonextractarrayraw', 'jsonextractkeys', 'jsonextractkeysandvalues', 'jsonhas', 'jsonlength', 'jsontype', 'isvalidjson',
  'simplejsonextractstring', 'simplejsonextractint', 'simplejsonextractfloat', 'simplejsonextractbool', 'simplejsonextractraw',
  'simplejsonhas', 'json_value', 'json_query', 'json_exists', 'visitparamextractstring', 'visitparamextractint', 'visitparamextractfloat',
];

// Not `in`/`notIn`/`globalIn`/`nullIn`: called as functions they take a table name as an argument.
const OPERATORS_AS_FUNCTIONS = ['exists', 'and', 'or', 'not', 'xor', 'equals', 'notequals', 'less', 'greater', 'lessorequals', 'greaterorequals'];

export const ALLOWED_FUNCTIONS: ReadonlySet<string> = new Set(
  [...AGGREGATES, ...WINDOW, ...CONDITIONAL_AND_NULLS, ...MATH, ...CONVERSION, ...DATES, ...STRINGS, ...ARRAYS_MAPS_TUPLES, ...JSON_FUNCTIONS, ...OPERATORS_AS_FUNCTIONS].map((f) =>
    f.toLowerCase(),
  ),
);

/** Aggregates that take parameters, as in quantile(0.99)(x) or topK(5)(x). */
export const PARAMETRIC_AGGREGATES: ReadonlySet<string> = new Set(
  [
    'quantile', 'quantiles', 'quantileexact', 'quantilesexact', 'quantiletdigest', 'quantilestdigest', 'quantiletiming', 'quantilestiming',
    'quantileexactweighted', 'quantileif', 'quantilesif', 'quantileexactif', 'topk', 'topkweighted', 'topkif', 'grouparray', 'grouparraysorted',
    'groupuniqarray', 'histogram', 'uniqupto', 'grouparrayif', 'groupuniqarrayif',
  ].map((f) => f.toLowerCase()),
);

export function isAllowedFunction(name: string): boolean {
  return ALLOWED_FUNCTIONS.has(name.toLowerCase());
}
