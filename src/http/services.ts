import type { ServiceContext } from '../services/context.js';
import type { QueueService } from '../event-queue/queue-service.js';

/** The services route plugins receive from app.ts. */
export interface AppServices {
  ctx: ServiceContext;
  queues: QueueService;
}
