/**
 * The web app's slash commands the real server answers (POST /zcommand): each is a personal
 * setting change, or nothing. Pure: the current settings in, the answer and any change out.
 */
export interface ZcommandOutcome {
  msg?: string;
  change?: Record<string, unknown>;
}

const COLOR_SCHEME_DARK = 2;
const COLOR_SCHEME_LIGHT = 3;

interface ModeCommand {
  setting: string;
  value: unknown;
  /** as the real server words it in "Changed to …" and "You are still in …" */
  name: string;
  still: string;
  revert: string;
}

const MODES: Record<string, ModeCommand> = {
  dark: { setting: 'color_scheme', value: COLOR_SCHEME_DARK, name: 'dark theme', still: 'dark theme', revert: 'light' },
  light: { setting: 'color_scheme', value: COLOR_SCHEME_LIGHT, name: 'light theme', still: 'light theme', revert: 'dark' },
  'fluid-width': { setting: 'fluid_layout_width', value: true, name: 'fluid-width mode', still: 'fluid width mode', revert: 'fixed-width' },
  'fixed-width': { setting: 'fluid_layout_width', value: false, name: 'fixed-width mode', still: 'fixed width mode', revert: 'fluid-width' },
};

export class ZcommandError extends Error {}

export function decideZcommand(content: string, current: Record<string, unknown>): ZcommandOutcome {
  if (!content.startsWith('/')) throw new ZcommandError('There should be a leading slash in the zcommand.');
  const command = content.slice(1);
  if (command === 'ping') return {};
  const mode = Object.hasOwn(MODES, command) ? MODES[command]! : undefined;
  if (!mode) throw new ZcommandError(`No such command: ${command}`);
  if (current[mode.setting] === mode.value) return { msg: `You are still in ${mode.still}.` };
  return {
    msg: `Changed to ${mode.name}! To revert ${mode.name}, type \`/${mode.revert}\`.`,
    change: { [mode.setting]: mode.value },
  };
}
