import type { FastifyInstance } from 'fastify';
import type { AppServices } from '../services.js';

/** Route plugins of the API areas beyond users and events; each area adds its plugin here. */
export const areaRoutes: Array<(app: FastifyInstance, opts: { services: AppServices }) => Promise<void>> = [];
