// SPDX-License-Identifier: GPL-2.0
/*
 * A Lua C module, built marked (-fcf-protection=branch) and unmarked:
 * require() loads it with dlopen() and calls luaopen_mod through a
 * pointer, and Lua calls value() through a pointer too.
 */
#include <lua.h>
#include <lauxlib.h>

static int value(lua_State *L)
{
	lua_pushinteger(L, 42);
	return 1;
}

static const luaL_Reg funcs[] = {
	{ "value", value },
	{ NULL, NULL },
};

int luaopen_mod(lua_State *L)
{
	luaL_newlib(L, funcs);
	return 1;
}
