// SPDX-License-Identifier: GPL-2.0
/* Linked against libgone.so, which the build then removes. */
int gone(void);

int main(void)
{
	return gone();
}
