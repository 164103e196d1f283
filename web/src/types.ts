import type { components } from './api-schema.gen';

/**
 * The answers of the public API (docs/) the pages read, named from the types generated from the
 * served OpenAPI document (api-schema.gen.ts, `npm run gen:web-types`): the shapes are declared once,
 * in the server's zod answer schemas (src/<resource>/answers.ts), and never written again here.
 */
type Schemas = components['schemas'];
type Item<T extends { data: readonly unknown[] }> = T['data'][number];

export type Page<T> = { data: T[]; meta: Schemas['PaginationMeta'] };

/** The signed-in user of the web session (`GET /api/auth/session`, a web route outside the public API). */
export type User = { id: string; email: string; name: string };
export type Role = Schemas['Role'];
export type Workspace = Item<Schemas['WorkspaceList']>;
export type Project = Item<Schemas['ProjectList']>;
export type Member = Schemas['Member'];
export type ApiKey = Item<Schemas['ApiKeyList']> & Partial<Pick<Schemas['ApiKeyCreated'], 'key'>>;

/** A trace as the list answers it; a session's traces come without the list's score summaries. */
export type TraceItem = Omit<Schemas['TraceListEntry'], 'scores'> & Partial<Pick<Schemas['TraceListEntry'], 'scores'>>;
export type ScoreSummary = Schemas['ScoreSummary'];
export type Score = Schemas['Score'];
export type Span = Schemas['Span'];
export type SpanEvent = Schemas['SpanEvent'];
export type SpanLink = Schemas['SpanLink'];
export type TraceDetail = Schemas['TraceDetail'];
export type SessionSummary = Schemas['SessionSummary'];
export type SessionDetail = Schemas['SessionDetail'];
/** One predicate of the trace list's `filters` (docs/filters.md). */
export type Predicate = Schemas['Predicate'];

export type WidgetSpec = Schemas['WidgetSpec'];
export type WidgetType = Schemas['Widget']['type'];
export type Widget = Schemas['DashboardDetail']['widgets'][number];
export type DashboardItem = Item<Schemas['DashboardList']>;
export type Dashboard = Schemas['DashboardDetail'];
export type AnsweredWidget = Schemas['AnsweredWidget'];
export type AnsweredWindow = Schemas['AnsweredWindow'];
export type DashboardData = Schemas['DashboardData'];

export type SqlSchema = Schemas['SqlSchema'];
export type SqlResult = Schemas['SqlResult'];

export type SignalItem = Schemas['SignalListItem'];
export type SignalStatus = SignalItem['status'];
export type SignalDetail = Schemas['SignalDetail'];
export type RcaHint = NonNullable<SignalDetail['rca']>['hints'][number];
export type Finding = Item<Schemas['FindingList']>;

export type Alert = Schemas['AlertDetail'];
export type AlertFilter = Alert['filters'][number];
export type AlertEvaluation = Item<Schemas['AlertEvaluationList']>;

export type Evaluation = Item<Schemas['EvaluationList']>;
export type RunSummary = Schemas['RunSummary'];
export type ScoreEntry = RunSummary['scores'][number];
export type RunComparison = Schemas['RunComparison'];
export type MeanDelta = RunComparison['scores'][number];
export type CaseChange = RunComparison['regressions'][number];

export type ScoreConfig = Schemas['ScoreConfig'];
export type LlmConnection = Schemas['LlmConnection'];
export type LlmConnectionTest = Schemas['LlmConnectionTest'];
export type Evaluator = Schemas['Evaluator'];
export type EvaluatorScorer = Schemas['EvaluatorScorer'];
export type EvaluatorExecution = Schemas['EvaluatorExecution'];
export type EvaluatorDryRun = Schemas['EvaluatorDryRun'];
export type EvaluatorAgreement = Schemas['EvaluatorAgreement'];
/**
 * A backfill's progress (quality.md §2: `POST /evaluators/{id}/backfill` → 202, and
 * `GET /evaluators/{id}/backfills/{backfill_id}`): written by hand until the routes are in the served
 * document; the fields past the spec's four are read when present.
 */
export type EvaluatorBackfill = {
  backfill_id: string;
  /** pending, running, completed or cancelled (the evaluator was disabled or deleted) */
  status: string;
  total: number;
  done: number;
  /** the window held more matching traces than one backfill takes */
  truncated?: boolean;
};
/** An execution, with the fields the evaluator runtime adds when present (the judge's own trace). */
export type EvaluatorExecutionRow = EvaluatorExecution & { judge_trace_id?: string | null; evaluator_version?: number };
export type PromptItem = Item<Schemas['PromptList']>;
export type PromptVersion = Schemas['PromptVersion'];
export type PromptMetrics = Schemas['PromptMetrics'];
export type AnnotationQueue = Schemas['AnnotationQueue'];
export type AnnotationItem = Schemas['AnnotationQueueItem'];
export type AnnotationNext = Schemas['AnnotationQueueNext'];
export type TraceComment = Schemas['Comment'];
export type MaskingSetting = Schemas['MaskingSetting'];
export type QuotasSetting = Schemas['QuotasSetting'];
export type ProjectUsage = Schemas['ProjectUsage'];
export type WorkspaceUsage = Schemas['WorkspaceUsage'];
export type UsageDay = ProjectUsage['data'][number];
