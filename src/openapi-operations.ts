/**
 * The name, summary and tag of every public operation, keyed by method and path (relative to the
 * public prefix, in OpenAPI's `{param}` form). src/openapi.ts applies them in its transform, so route
 * files declare only their schemas and generated clients get stable names (`client.listTraces`), not
 * ones derived from the URL. A route missing here fails the document's test (test/http/openapi.test.ts).
 */

export type Operation = { operationId: string; summary: string; tag: Tag };

/** The document's tags, in the order a reader meets them. */
export const TAGS = {
  Traces: 'Span ingest (native JSON and OTLP/HTTP), traces and their spans (docs/traces.md, docs/spans.md)',
  Sessions: 'Sessions: the traces sharing a session id (docs/traces.md)',
  SQL: 'Read-only SQL over the project’s spans (docs/sql.md)',
  Dashboards: 'Dashboards and their data (docs/dashboards.md)',
  Widgets: 'Dashboard widgets and ad-hoc widget queries (docs/dashboards.md)',
  Alerts: 'Threshold alerts and their evaluations (docs/alerts.md)',
  Detectors: 'Signal detectors (docs/signals.md)',
  Signals: 'Signals and the findings behind them (docs/signals.md)',
  Datasets: 'Datasets and their versions (docs/datasets.md)',
  Evaluations: 'Evaluations, runs, results and comparisons (docs/datasets.md)',
  'Model prices': 'The price table that costs spans (docs/model-prices.md)',
  Prompts: 'Prompts: numbered versions, labels, compile (docs/prompts.md)',
  Projects: 'Projects and the caller (docs/authentication.md)',
  'API keys': 'Project API keys (docs/authentication.md)',
  Workspaces: 'Workspaces and their members (docs/authentication.md)',
} as const;
export type Tag = keyof typeof TAGS;

const op = (operationId: string, tag: Tag, summary: string): Operation => ({ operationId, summary, tag });

export const OPERATIONS: Readonly<Record<string, Operation>> = {
  'GET /workspaces': op('listWorkspaces', 'Workspaces', 'List the workspaces of the caller'),
  'POST /workspaces': op('createWorkspace', 'Workspaces', 'Create a workspace'),
  'DELETE /workspaces/{workspace_id}': op('deleteWorkspace', 'Workspaces', 'Delete a workspace'),
  'GET /workspaces/{workspace_id}/members': op('listWorkspaceMembers', 'Workspaces', 'List the members of a workspace'),
  'POST /workspaces/{workspace_id}/members': op('addWorkspaceMember', 'Workspaces', 'Add a member to a workspace'),
  'PATCH /workspaces/{workspace_id}/members/{user_id}': op(
    'updateWorkspaceMember',
    'Workspaces',
    "Change a member's role",
  ),
  'DELETE /workspaces/{workspace_id}/members/{user_id}': op(
    'removeWorkspaceMember',
    'Workspaces',
    'Remove a member from a workspace',
  ),
  'POST /projects': op('createProject', 'Projects', 'Create a project'),
  'GET /projects': op('listProjects', 'Projects', 'List the projects the caller can read'),
  'GET /projects/{project_id}': op('getProject', 'Projects', 'Get a project'),
  'PATCH /projects/{project_id}': op('updateProject', 'Projects', 'Rename a project'),
  'DELETE /projects/{project_id}': op('deleteProject', 'Projects', 'Delete a project and its data'),
  'GET /whoami': op('whoami', 'Projects', 'Who the credential belongs to'),
  'POST /projects/{project_id}/api-keys': op('createApiKey', 'API keys', 'Create an API key'),
  'GET /projects/{project_id}/api-keys': op('listApiKeys', 'API keys', "List a project's API keys"),
  'DELETE /projects/{project_id}/api-keys/{key_id}': op('revokeApiKey', 'API keys', 'Revoke an API key'),
  'GET /traces': op('listTraces', 'Traces', 'List traces, newest first (filters, full-text search)'),
  'POST /traces': op('ingestSpans', 'Traces', 'Ingest spans (native JSON)'),
  'POST /otel/v1/traces': op('ingestOtlp', 'Traces', 'Ingest spans (OTLP/HTTP, protobuf or JSON)'),
  'GET /traces/{trace_id}': op('getTrace', 'Traces', 'Get a trace with its spans'),
  'GET /sessions': op(
    'listSessions',
    'Sessions',
    'List sessions, most recent first, with their totals (filters, full-text search)',
  ),
  'GET /sessions/{session_id}': op('getSession', 'Sessions', 'Get a session with its traces'),
  'GET /sql/schema': op('getSqlSchema', 'SQL', 'The tables and columns SQL may read'),
  'POST /sql': op('runSql', 'SQL', 'Run a read-only SQL query'),
  'GET /dashboards': op('listDashboards', 'Dashboards', 'List dashboards'),
  'POST /dashboards': op('createDashboard', 'Dashboards', 'Create a dashboard'),
  'GET /dashboards/{dashboard_id}': op('getDashboard', 'Dashboards', 'Get a dashboard with its widgets'),
  'PATCH /dashboards/{dashboard_id}': op('updateDashboard', 'Dashboards', 'Update a dashboard'),
  'DELETE /dashboards/{dashboard_id}': op('deleteDashboard', 'Dashboards', 'Delete a dashboard'),
  'GET /dashboards/{dashboard_id}/data': op('getDashboardData', 'Dashboards', "Answer a dashboard's widgets"),
  'POST /widgets': op('createWidget', 'Widgets', 'Add a widget to a dashboard'),
  'GET /widgets/{widget_id}': op('getWidget', 'Widgets', 'Get a widget'),
  'PATCH /widgets/{widget_id}': op('updateWidget', 'Widgets', 'Update a widget'),
  'DELETE /widgets/{widget_id}': op('deleteWidget', 'Widgets', 'Delete a widget'),
  'POST /widgets/query': op('queryWidget', 'Widgets', 'Answer a widget spec without saving it'),
  'GET /alerts': op('listAlerts', 'Alerts', 'List alerts'),
  'POST /alerts': op('createAlert', 'Alerts', 'Create an alert'),
  'GET /alerts/{alert_id}': op('getAlert', 'Alerts', 'Get an alert'),
  'PATCH /alerts/{alert_id}': op('updateAlert', 'Alerts', 'Update an alert'),
  'DELETE /alerts/{alert_id}': op('deleteAlert', 'Alerts', 'Delete an alert'),
  'GET /alerts/{alert_id}/evaluations': op('listAlertEvaluations', 'Alerts', "List an alert's evaluations"),
  'POST /alerts/{alert_id}/pause': op('pauseAlert', 'Alerts', 'Pause an alert'),
  'POST /alerts/{alert_id}/resume': op('resumeAlert', 'Alerts', 'Resume a paused alert'),
  'GET /detectors': op('listDetectors', 'Detectors', 'List detectors'),
  'POST /detectors': op('createDetector', 'Detectors', 'Create a detector'),
  'GET /detectors/{detector_id}': op('getDetector', 'Detectors', 'Get a detector'),
  'PATCH /detectors/{detector_id}': op('updateDetector', 'Detectors', 'Update a detector'),
  'DELETE /detectors/{detector_id}': op('deleteDetector', 'Detectors', 'Delete a detector'),
  'GET /signals': op('listSignals', 'Signals', 'List signals'),
  'GET /signals/{signal_id}': op('getSignal', 'Signals', 'Get a signal'),
  'PATCH /signals/{signal_id}/status': op('setSignalStatus', 'Signals', 'Resolve, dismiss or reopen a signal'),
  'GET /findings': op('listFindings', 'Signals', 'List findings'),
  'GET /datasets': op('listDatasets', 'Datasets', 'List datasets'),
  'POST /datasets': op('createDataset', 'Datasets', 'Create a dataset'),
  'GET /datasets/{dataset_id}': op('getDataset', 'Datasets', 'Get a dataset'),
  'PATCH /datasets/{dataset_id}': op('updateDataset', 'Datasets', 'Update a dataset'),
  'POST /datasets/{dataset_id}/versions': op('createDatasetVersion', 'Datasets', 'Create a dataset version'),
  'GET /dataset-versions/{version_id}': op('getDatasetVersion', 'Datasets', 'Read a dataset version, page by page'),
  'GET /evaluations': op('listEvaluations', 'Evaluations', 'List evaluations'),
  'GET /evaluations/{evaluation_id}': op('getEvaluation', 'Evaluations', 'Get an evaluation with its runs'),
  'POST /evaluation-runs': op('startEvaluationRun', 'Evaluations', 'Start an evaluation run'),
  'GET /evaluation-runs/{run_id}': op('getEvaluationRun', 'Evaluations', 'Get an evaluation run summary'),
  'POST /evaluation-runs/{run_id}/results': op('addEvaluationResults', 'Evaluations', 'Record results of a run'),
  'POST /evaluation-runs/{run_id}/complete': op('completeEvaluationRun', 'Evaluations', 'Complete an evaluation run'),
  'GET /evaluation-runs/{run_id}/compare': op('compareEvaluationRuns', 'Evaluations', 'Compare a run with another'),
  'GET /model-prices': op('listModelPrices', 'Model prices', 'List model prices'),
  'POST /model-prices': op('createModelPrice', 'Model prices', 'Add a model price'),
  'PATCH /model-prices/{price_id}': op('updateModelPrice', 'Model prices', 'Update a model price'),
  'DELETE /model-prices/{price_id}': op('deleteModelPrice', 'Model prices', 'Delete a model price'),
  'GET /prompts': op('listPrompts', 'Prompts', 'List prompts'),
  'POST /prompts': op('createPrompt', 'Prompts', 'Create a prompt version'),
  'GET /prompts/{name}': op('getPrompt', 'Prompts', 'Get a prompt version (by version, label, or production)'),
  'GET /prompts/{name}/versions': op('listPromptVersions', 'Prompts', "List a prompt's versions"),
  'PATCH /prompts/{name}/versions/{version}': op('setPromptLabels', 'Prompts', "Set a prompt version's labels"),
  'DELETE /prompts/{name}': op('deletePrompt', 'Prompts', 'Delete a prompt and its versions'),
  'POST /prompts/{name}/compile': op('compilePrompt', 'Prompts', 'Fill a prompt version with variables'),
  'GET /prompts/{name}/metrics': op('comparePromptVersions', 'Prompts', "Compare a prompt's versions over a window"),
};

/** The key of a route in OPERATIONS: `GET /traces/{trace_id}` for Fastify's `/traces/:trace_id`. */
export function operationKey(method: string, path: string): string {
  return `${method.toUpperCase()} ${path.replace(/:(\w+)/g, '{$1}')}`;
}
