// SPDX-License-Identifier: GPL-2.0
/*
 * mpip: multipath IP for end hosts.
 *
 * Module entry points.  All state lives in the per network namespace
 * struct mpip_net (pernet.c); this file only ties the pieces together.
 */
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <net/genetlink.h>

#include "mpip.h"

bool mpip_default_enabled = true;
module_param_named(default_enabled, mpip_default_enabled, bool, 0644);
MODULE_PARM_DESC(default_enabled,
		 "Enable MPIP in every network namespace when it is created (default: yes)");

static int __init mpip_init(void)
{
	int err;

	err = mpip_pernet_register();
	if (err)
		return err;

	err = mpip_notify_register();
	if (err)
		goto err_pernet;

	err = mpip_genl_register();
	if (err)
		goto err_notify;

	pr_info("mpip %s loaded\n", MPIP_VERSION);
	return 0;

err_notify:
	mpip_notify_unregister();
err_pernet:
	mpip_pernet_unregister();
	return err;
}

static void __exit mpip_exit(void)
{
	mpip_genl_unregister();
	mpip_notify_unregister();
	mpip_pernet_unregister();
	/* Wait for the RCU callbacks that free table entries and paths. */
	rcu_barrier();
	pr_info("mpip unloaded\n");
}

module_init(mpip_init);
module_exit(mpip_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Multipath IP routing on end hosts");
MODULE_VERSION(MPIP_VERSION);
MODULE_ALIAS_GENL_FAMILY(MPIP_GENL_NAME);
