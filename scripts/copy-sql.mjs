// The migrations are read at run time from beside their module, so the build ships them.
import { cpSync } from 'node:fs';

cpSync('src/postgres/migrations', 'dist/postgres/migrations', { recursive: true, filter: (path) => !path.endsWith('.ts') });
