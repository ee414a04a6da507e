import type { ErrorRequestHandler } from 'express';

/** Answers with the status already set (a library's 409 or 417) or 500, without logging each one. */
export const answerError: ErrorRequestHandler = (error: unknown, _req, res, _next) => {
  const status = res.statusCode >= 400 ? res.statusCode : 500;
  res.status(status).json({ error: error instanceof Error ? error.message : 'failed' });
};
