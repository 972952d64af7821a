import { errors } from '../errors.js';
import { assertNever } from '../event-types.js';
import type { AttachmentEvent } from './events.js';

export interface AttachmentState {
  attachment_id: number;
  realm_id: number;
  owner_id: number;
  path_id: string;
  size: number;
  linked_message_count: number;
  orphaned: boolean;
  create_time: number;
}

export type AttachmentCommand =
  | {
      type: 'UploadAttachment';
      attachment_id: number;
      realm_id: number;
      owner_id: number;
      file_name: string;
      /** random path component(s) chosen by the service: `<2 hex>/<24 url-safe characters>` */
      random_dir: string;
      content_type: string;
      size: number;
      max_size_mib: number;
      now_ms: number;
      realm_space_used: number;
    }
  | { type: 'DeleteAttachment'; actor_id: number; realm_space_used: number }
  | { type: 'ExpireAttachment'; now_ms: number; unused_retention_ms: number; realm_space_used: number };

export const invalidAttachment = () => errors.badRequest('Invalid attachment');

/** A file name safe in a URL path segment and on disk: letters, digits, '.', '_' and '-'. */
export function sanitizeFileName(name: string): string {
  const base = name.normalize('NFKC').split(/[/\\]/).pop() ?? '';
  const cleaned = base
    .replace(/\s+/g, '-')
    .replace(/[^\p{L}\p{N}._-]/gu, '')
    .replace(/^[.-]+/, '')
    .slice(0, 200);
  return cleaned === '' ? 'uploaded-file' : cleaned;
}

/** Pure: upload, deletion by the owner, or expiry of one attachment. */
export function decideAttachment(command: AttachmentCommand, state: AttachmentState | null): AttachmentEvent[] {
  switch (command.type) {
    case 'UploadAttachment': {
      if (state) throw new Error('attachment id in use');
      if (command.size > command.max_size_mib * 1024 * 1024) {
        throw errors.badRequest(`Uploaded file is larger than the allowed limit of ${command.max_size_mib} MiB`);
      }
      const name = sanitizeFileName(command.file_name);
      return [{
        type: 'AttachmentUploaded',
        data: {
          attachment_id: command.attachment_id,
          realm_id: command.realm_id,
          owner_id: command.owner_id,
          name,
          path_id: `${command.realm_id}/${command.random_dir}/${name}`,
          content_type: command.content_type,
          size: command.size,
          create_time: command.now_ms,
          upload_space_used: command.realm_space_used + command.size,
        },
      }];
    }
    case 'DeleteAttachment':
      // One gone with its deleted messages is no longer the user's to delete (the cleanup removes it).
      if (!state || state.owner_id !== command.actor_id || state.orphaned) throw invalidAttachment();
      return [deleted(state, 'user', command.realm_space_used)];
    case 'ExpireAttachment': {
      if (!state || state.linked_message_count > 0) return [];
      if (state.orphaned) return [deleted(state, 'unlinked', command.realm_space_used)];
      if (state.create_time + command.unused_retention_ms <= command.now_ms) return [deleted(state, 'unused', command.realm_space_used)];
      return [];
    }
    default:
      return assertNever(command);
  }
}

function deleted(state: AttachmentState, reason: 'user' | 'unlinked' | 'unused', spaceUsed: number): AttachmentEvent {
  return {
    type: 'AttachmentDeleted',
    data: {
      attachment_id: state.attachment_id,
      realm_id: state.realm_id,
      owner_id: state.owner_id,
      path_id: state.path_id,
      reason,
      upload_space_used: Math.max(0, spaceUsed - state.size),
    },
  };
}
