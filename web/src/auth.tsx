import { useEffect, type ReactNode } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Navigate, useLocation } from 'react-router';
import { ApiError, request } from './api';
import type { User } from './types';
import { ErrorBox, Loading } from './components/ui';

export const SESSION_KEY = ['session'] as const;

export function useSession() {
  return useQuery({
    queryKey: SESSION_KEY,
    queryFn: () => request<{ user: User }>('/api/auth/session'),
    retry: (count, error) => !(error instanceof ApiError && error.status < 500) && count < 2,
    staleTime: 5 * 60_000,
  });
}

/** Where a logged-out visitor is sent: the login page, which brings them back afterwards. */
export function loginPath(location: { pathname: string; search: string }): string {
  const next = location.pathname + location.search;
  return next === '/' ? '/login' : `/login?next=${encodeURIComponent(next)}`;
}

/** Pages behind a login. A 401 from any call later (session ended elsewhere) also lands here. */
export function RequireAuth({ children }: { children: ReactNode }) {
  const session = useSession();
  const location = useLocation();
  const client = useQueryClient();
  useEffect(() => {
    const onUnauthorized = () => void client.invalidateQueries({ queryKey: SESSION_KEY });
    window.addEventListener('sightline:unauthorized', onUnauthorized);
    return () => window.removeEventListener('sightline:unauthorized', onUnauthorized);
  }, [client]);
  if (session.isPending) return <Loading label="Checking your session…" />;
  if (session.error) {
    if (session.error instanceof ApiError && session.error.status === 401)
      return <Navigate to={loginPath(location)} replace />;
    return (
      <div className="page">
        <ErrorBox error={session.error} title="The server could not check your session" />
      </div>
    );
  }
  return <>{children}</>;
}

/** Only a relative path on this origin may be a post-login destination. */
export function safeNext(raw: string | null): string {
  if (!raw || !raw.startsWith('/') || raw.startsWith('//') || raw.startsWith('/\\')) return '/';
  return raw;
}
