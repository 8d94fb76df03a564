import { RUN_LUA_VALUES } from '../run-scripts.js';
import { luaScript } from '../../redis/lua-script.js';

/** Creates a fork in one script over its own keys. Its KEYS, ARGV and reply: the header of lua/fork-run-8.lua. */
export const FORK_RUN = luaScript(new URL('./lua/fork-run-8.lua', import.meta.url), RUN_LUA_VALUES);
