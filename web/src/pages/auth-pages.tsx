import { useState, type FormEvent } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { ApiError, request } from '../api';
import { safeNext, SESSION_KEY } from '../auth';
import { useTitle } from '../components/ui';
import type { User } from '../types';

type SessionAnswer = { session_token: string; user: User };

function useSignIn() {
  const client = useQueryClient();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  return (answer: SessionAnswer) => {
    // The token itself stays in the HttpOnly cookie the server just set; the page keeps only the user.
    client.clear();
    client.setQueryData(SESSION_KEY, { user: answer.user });
    navigate(safeNext(params.get('next')), { replace: true });
  };
}

function AuthFrame({ title, children, footer }: { title: string; children: React.ReactNode; footer: React.ReactNode }) {
  return (
    <div className="auth-page">
      <div className="auth-card">
        <div className="brand big">
          <span className="logo" aria-hidden="true" />
          Sightline
        </div>
        <h1>{title}</h1>
        {children}
        <p className="muted auth-footer">{footer}</p>
      </div>
    </div>
  );
}

export function LoginPage() {
  useTitle('Log in');
  const signIn = useSignIn();
  const [params] = useSearchParams();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    setBusy(true);
    setError(null);
    try {
      signIn(
        await request<SessionAnswer>('/api/auth/login', {
          method: 'POST',
          body: { email: form.get('email'), password: form.get('password') },
        }),
      );
    } catch (err) {
      setError(err instanceof ApiError ? err.detail : 'the server could not be reached');
      setBusy(false);
    }
  };
  const next = params.get('next');
  return (
    <AuthFrame
      title="Log in"
      footer={
        <>
          No account yet? <Link to={`/signup${next ? `?next=${encodeURIComponent(next)}` : ''}`}>Sign up</Link>
        </>
      }
    >
      <form onSubmit={submit} className="stack">
        {error && (
          <p className="form-error" role="alert">
            {error}
          </p>
        )}
        <label>
          E-mail
          <input name="email" type="email" autoComplete="username" required autoFocus />
        </label>
        <label>
          Password
          <input name="password" type="password" autoComplete="current-password" required />
        </label>
        <button className="primary" type="submit" disabled={busy}>
          {busy ? 'Logging in…' : 'Log in'}
        </button>
      </form>
    </AuthFrame>
  );
}

export function SignupPage() {
  useTitle('Sign up');
  const signIn = useSignIn();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    setBusy(true);
    setError(null);
    try {
      signIn(
        await request<SessionAnswer>('/api/auth/signup', {
          method: 'POST',
          body: { name: form.get('name'), email: form.get('email'), password: form.get('password') },
        }),
      );
    } catch (err) {
      setError(err instanceof ApiError ? err.detail : 'the server could not be reached');
      setBusy(false);
    }
  };
  return (
    <AuthFrame
      title="Create your account"
      footer={
        <>
          Already have an account? <Link to="/login">Log in</Link>
        </>
      }
    >
      <form onSubmit={submit} className="stack">
        {error && (
          <p className="form-error" role="alert">
            {error}
          </p>
        )}
        <label>
          Name
          <input name="name" autoComplete="name" required maxLength={200} autoFocus />
        </label>
        <label>
          E-mail
          <input name="email" type="email" autoComplete="username" required />
        </label>
        <label>
          Password <span className="muted">(at least 8 characters)</span>
          <input name="password" type="password" autoComplete="new-password" required minLength={8} />
        </label>
        <button className="primary" type="submit" disabled={busy}>
          {busy ? 'Creating…' : 'Sign up'}
        </button>
      </form>
    </AuthFrame>
  );
}
