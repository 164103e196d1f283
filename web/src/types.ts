/** The answers of the public API (docs/) the pages read. */
export type Page<T> = { data: T[]; meta: { page: number; limit: number; total: number } };

export type User = { id: string; email: string; name: string };
export type Workspace = { id: string; name: string; role: Role };
export type Role = 'VIEWER' | 'MEMBER' | 'ADMIN';
export type Project = { id: string; name: string; workspace_id: string; workspace_name: string };

export type TraceItem = {
  trace_id: string;
  project_id: string;
  name: string;
  trace_start_time: string;
  user_id: string | null;
  session_id: string | null;
  span_count: number;
  duration_ms: number | null;
  error_count: number;
  input: string | null;
  output: string | null;
  trace_url: string;
  metadata_map?: Record<string, string>;
  total_cost?: number | null;
  total_input_tokens?: number | null;
  total_output_tokens?: number | null;
  /** Present on items found by `text_query`: where the text matched. */
  text_match?: { span_id: string; field: 'input' | 'output' | 'error_message'; snippet: string };
};

export type Span = {
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  name: string;
  kind: string;
  start_time: string;
  end_time: string | null;
  duration_ms: number | null;
  status: string;
  error_type: string | null;
  error_message: string | null;
  model_name: string | null;
  environment: string | null;
  user_id: string | null;
  session_id: string | null;
  input: string | null;
  output: string | null;
  metadata: Record<string, string>;
  cost: number;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  evaluation_run_id: string | null;
  // More span fields (docs/spans.md).
  cost_source: 'sent' | 'computed' | 'none';
  cache_read_tokens: number;
  cache_write_tokens: number;
  reasoning_tokens: number;
  time_to_first_token_ms: number | null;
  output_tokens_per_second: number | null;
  events: SpanEvent[];
  links: SpanLink[];
  resource: Record<string, string>;
  dropped_attributes_count: number;
};
export type SpanEvent = { name: string; time: string; attributes: Record<string, string> };
export type SpanLink = { trace_id: string; span_id: string; attributes: Record<string, string> };

export type TraceDetail = TraceItem & { spans: Span[]; truncated?: boolean };

export type SessionSummary = {
  session_id: string;
  trace_count: number;
  first_trace_time: string;
  last_trace_time: string;
  total_cost: number;
  total_input_tokens: number;
  total_output_tokens: number;
  user_id: string | null;
};
export type SessionDetail = SessionSummary & { traces: TraceItem[]; truncated: boolean };

export type Predicate =
  | { field: 'trace_id'; op: 'eq' | 'contains'; value: string }
  | { field: 'signal_id'; op: 'eq'; value: string }
  | { field: 'model_name' | 'environment' | 'span_kind' | 'status' | 'error_type' | 'name'; op: 'in'; value: string[] }
  | { field: 'cost' | 'total_tokens' | 'duration_ms' | 'errors'; op: 'eq' | 'gt' | 'gte' | 'lt' | 'lte'; value: number }
  | {
      field: 'time_to_first_token_ms' | 'output_tokens_per_second';
      op: 'eq' | 'gt' | 'gte' | 'lt' | 'lte';
      value: number;
    }
  | { field: 'metadata'; op: 'eq' | 'contains'; value: string; key: string };

export type WidgetType = 'timeseries' | 'stat' | 'table' | 'bar' | 'markdown';
export type WidgetSpec = {
  view: 'SPANS' | 'TRACES';
  measure: string;
  aggregation: string;
  group_by?: string[];
  interval?: 'auto' | '1m' | '5m' | '1h' | '1d';
  filters?: Predicate[];
  limit?: number;
};
export type Widget = { id: string; title: string; type: WidgetType; spec: unknown; create_time: string };
export type DashboardItem = {
  id: string;
  name: string;
  description: string;
  is_default: boolean;
  creator: string | null;
  create_time: string;
  update_time: string;
  widget_count: number;
};
export type Dashboard = Omit<DashboardItem, 'widget_count'> & { widgets: Widget[] };
export type AnsweredWidget = {
  id: string;
  title: string;
  type: string;
  status: 'ok' | 'error' | 'skipped' | string;
  columns: string[];
  rows: unknown[][];
  meta: Record<string, unknown>;
  error?: string;
  truncated?: boolean;
};
export type AnsweredWindow = { range: string | null; start_time: string; end_time: string; clamped: boolean };
export type DashboardData = {
  dashboard: Omit<DashboardItem, 'widget_count'>;
  widgets: AnsweredWidget[];
  queried: number;
  skipped: number;
  failed: number;
  window: AnsweredWindow;
};

export type SqlSchema = { tables: { name: string; columns: { name: string; type: string }[] }[] };
export type SqlResult = {
  columns: { name: string; type: string }[];
  rows: unknown[][];
  row_count: number;
  truncated: boolean;
  elapsed_ms: number;
};

export type ApiKey = {
  id: string;
  name: string;
  key_prefix: string;
  created_at: string;
  expires_at: string | null;
  last_used_at?: string | null;
  key?: string;
};
export type Member = { user_id: string; email: string; name: string; role: Role };

export type SignalStatus = 'open' | 'resolved' | 'dismissed';
export type SignalItem = {
  signal_id: string;
  detector_id: string;
  detector_name: string;
  title: string;
  status: SignalStatus;
  created_at: string;
  first_seen_at: string;
  last_seen_at: string;
  hit_count: number;
  reopen_count: number;
  rca_state: string;
};
export type RcaHint = { attribute: string; value: string; signal_share: number; baseline_share: number; lift: number };
export type SignalDetail = SignalItem & {
  resolved_at: string | null;
  merged_into_id: string | null;
  rca?: { generated_at: string; hints: RcaHint[]; error?: string } | null;
};
export type Finding = {
  finding_id: string;
  signal_id: string;
  detector_id: string;
  trace_id: string;
  span_id: string;
  trace_start_time: string;
  found_at: string;
  summary: string;
};

export type AlertFilter = { field: string; op?: string; value: string | number | string[]; key?: string };
export type Alert = {
  id: string;
  project_id: string;
  name: string;
  view: 'SPANS';
  measure: string;
  aggregation: string;
  threshold: number;
  threshold_operator: string;
  window: string;
  filters: AlertFilter[];
  group_by: string | null;
  no_data_mode: string;
  renotify: { mode: string; interval_minutes: number };
  severity: string;
  notify: { webhook_url: string } | null;
  status: string;
  creator: string | null;
  create_time: string;
  update_time: string;
  alerted_at: string | null;
  last_evaluated_at: string | null;
  last_value?: number | null;
  last_error: string | null;
  last_error_at: string | null;
  last_notify_at: string | null;
  last_notify_status: string | null;
  last_notify_error: string | null;
  groups?: { group: string; status: string; value: number | null; alerted_at: string | null }[];
};
export type AlertEvaluation = {
  window_start: string;
  window_end: string;
  value: number | null;
  state: string;
  previous_state: string;
  notified: boolean;
  error: string | null;
  evaluated_at: string;
};

export type Evaluation = {
  id: string;
  evaluation_id: string;
  name: string;
  evaluation_key: string | null;
  run_count: number;
  created_at: string;
  updated_at: string;
};
export type ScoreEntry = {
  name: string;
  direction: string;
  value_type: string;
  observed_count: number;
  unit?: string;
  value?: number;
};
export type RunSummary = {
  evaluation_run_id: string;
  evaluation_id: string;
  evaluation_name: string;
  evaluation_key?: string;
  dataset_id: string;
  dataset_version_id: string;
  candidate_version: string;
  environment: string;
  run_number: number;
  run_path: string;
  run_url: string;
  started_at: string;
  completed_at?: string;
  status: string;
  result_count: number;
  scored_count: number;
  not_scored_count: number;
  passed_count: number;
  failed_count: number;
  errored_count: number;
  scorer_error_count: number;
  task_error_count: number;
  scores?: ScoreEntry[];
  metrics?: ScoreEntry[];
};
export type MeanDelta = {
  name: string;
  direction: string;
  unit?: string;
  run_value: number | null;
  other_value: number | null;
  delta: number | null;
  run_observed_count: number;
  other_observed_count: number;
};
export type CaseChange = {
  test_case_id: string;
  run_passed: boolean | null;
  other_passed: boolean | null;
  scores: { name: string; run_value: number; other_value: number; delta: number }[];
};
export type RunComparison = {
  run: {
    evaluation_run_id: string;
    run_number: number;
    candidate_version: string;
    environment: string;
    status: string;
  };
  other: {
    evaluation_run_id: string;
    run_number: number;
    candidate_version: string;
    environment: string;
    status: string;
  };
  dataset_version_id: string;
  threshold: number;
  scores: MeanDelta[];
  metrics: MeanDelta[];
  regressions: CaseChange[];
  improvements: CaseChange[];
  next_cursor: string | null;
};
