/*
 * err.c: the tables behind err.h. Generated from the X-macro list so that the
 * enum, the wire names and the descriptions cannot drift apart.
 */
#include "err.h"

#include <string.h>

#define N_ERRORS_ (RIGD_E_LAST_ - RIGD_E_FIRST_ - 1)

static const char *const wire_names[] = {
#define RIGD_ERR_WIRE_(name, status, wire, text) wire,
	RIGD_ERRORS(RIGD_ERR_WIRE_)
#undef RIGD_ERR_WIRE_
};

static const short http_statuses[] = {
#define RIGD_ERR_STATUS_(name, status, wire, text) status,
	RIGD_ERRORS(RIGD_ERR_STATUS_)
#undef RIGD_ERR_STATUS_
};

static const char *const texts[] = {
#define RIGD_ERR_TEXT_(name, status, wire, text) text,
	RIGD_ERRORS(RIGD_ERR_TEXT_)
#undef RIGD_ERR_TEXT_
};

static int slot_of(int err)
{
	if (err <= RIGD_E_FIRST_ || err >= RIGD_E_LAST_)
		return -1;
	return err - RIGD_E_FIRST_ - 1;
}

const char *err_code(int err)
{
	int i = slot_of(err);

	if (err == RIGD_OK)
		return "ok";
	return i < 0 ? "internal" : wire_names[i];
}

const char *err_str(int err)
{
	int i = slot_of(err);

	if (err == RIGD_OK)
		return "success";
	return i < 0 ? "internal error" : texts[i];
}

int err_http_status(int err)
{
	int i = slot_of(err);

	if (err == RIGD_OK)
		return 200;
	return i < 0 ? 500 : http_statuses[i];
}

int err_from_code(const char *code)
{
	for (int i = 0; i < N_ERRORS_; i++)
		if (strcmp(wire_names[i], code) == 0)
			return RIGD_E_FIRST_ + 1 + i;
	return 0;
}
