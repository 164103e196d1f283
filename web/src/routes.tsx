import { Navigate, Route, Routes, useParams } from 'react-router';
import { RequireAuth } from './auth';
import { Home, ProjectLayout, Shell } from './layout';
import { NotFound } from './components/ui';
import { LoginPage, SignupPage } from './pages/auth-pages';
import { NewProjectPage } from './pages/new-project';
import { TracesPage } from './pages/traces/traces-page';
import { TracePage } from './pages/traces/trace-page';
import { SessionsPage, SessionPage } from './pages/sessions';
import { DashboardsPage } from './pages/dashboards/dashboards-page';
import { DashboardPage } from './pages/dashboards/dashboard-page';
import { SqlPage } from './pages/sql-page';
import { SettingsPage } from './pages/settings-page';
import { SignalsPage, SignalPage } from './pages/signals';
import { AlertsPage, AlertPage } from './pages/alerts';
import { EvaluationsRoutes } from './pages/evaluations';
import { EvaluatorsRoutes } from './pages/evaluators/evaluators-page';
import { PromptsRoutes } from './pages/prompts';
import { AnnotationQueuesPage } from './pages/annotation/queues-page';
import { ReviewPage } from './pages/annotation/review-page';
import { UsagePage } from './pages/usage';

function ProjectIndex() {
  const { projectId } = useParams();
  return <Navigate to={`/projects/${projectId}/traces`} replace />;
}

/**
 * Every page and its deep link (issue 13, "Deep links"): the CLI and notifications link here, so these
 * paths are fixed. Anything else is a not-found page.
 */
export function AppRoutes() {
  return (
    <Routes>
      <Route path="/login" element={<LoginPage />} />
      <Route path="/signup" element={<SignupPage />} />
      <Route
        element={
          <RequireAuth>
            <Shell />
          </RequireAuth>
        }
      >
        <Route index element={<Home />} />
        <Route path="projects/new" element={<NewProjectPage />} />
        <Route path="projects/:projectId" element={<ProjectLayout />}>
          <Route index element={<ProjectIndex />} />
          <Route path="traces" element={<TracesPage />} />
          <Route path="traces/:traceId" element={<TracePage />} />
          <Route path="sessions" element={<SessionsPage />} />
          <Route path="sessions/:sessionId" element={<SessionPage />} />
          <Route path="dashboards" element={<DashboardsPage />} />
          <Route path="dashboards/:dashboardId" element={<DashboardPage />} />
          <Route path="sql" element={<SqlPage />} />
          <Route path="signals" element={<SignalsPage />} />
          <Route path="signals/:signalId" element={<SignalPage />} />
          <Route path="alerts" element={<AlertsPage />} />
          <Route path="alerts/:alertId" element={<AlertPage />} />
          <Route path="evaluations/*" element={<EvaluationsRoutes />} />
          <Route path="evaluators/*" element={<EvaluatorsRoutes />} />
          <Route path="prompts/*" element={<PromptsRoutes />} />
          <Route path="annotation" element={<AnnotationQueuesPage />} />
          <Route path="annotation/:queueId" element={<ReviewPage />} />
          <Route path="usage" element={<UsagePage />} />
          <Route path="settings" element={<SettingsPage />} />
          <Route path="*" element={<NotFound />} />
        </Route>
        <Route path="*" element={<NotFound />} />
      </Route>
    </Routes>
  );
}
