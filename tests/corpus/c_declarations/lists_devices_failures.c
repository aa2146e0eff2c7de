/* Seeds: list and tree operations, a driver's probe, remove and power
 * callbacks, a failure's handler and per-CPU data. */
struct dentry *d_alloc(struct dentry *parent, const struct qstr *name)
{
	struct dentry *dentry = __d_alloc(parent->d_sb, name);

	spin_lock(&parent->d_lock);
	hlist_add_head(&dentry->d_sib, &parent->d_children);
	hlist_add_head_rcu(&dentry->d_hash, &parent->d_table[name->hash & 7]);
	llist_add(&dentry->d_free, &parent->d_free_list);
	rb_erase(&dentry->d_rb, &parent->d_tree);
	list_move_tail(&dentry->d_lru, &parent->d_sb->s_lru);
	spin_unlock(&parent->d_lock);
	if (list_empty(&parent->d_subdirs) || hlist_empty(&parent->d_children))
		return NULL;
	return dentry;
}

static int foo_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct foo *f = pci_get_drvdata(pdev);

	set_bit(1, &f->flags);
	return 0;
}

static int foo_suspend_noirq(struct device *dev)
{
	struct foo *f = dev_get_drvdata(dev);

	clear_bit(1, &f->flags);
	return 0;
}

static void bar_remove(struct platform_device *pdev)
{
	list_del_init(&((struct foo *)platform_get_drvdata(pdev))->node);
}

static int tcp_mtu_probe(struct sock *sk)
{
	set_bit(3, &sk->sk_tsq_flags);
	return 0;
}

static int weird_probe(
{
	return 0;
}

static inline void mapping_set_error(struct address_space *mapping, int error)
{
	if (error == -ENOSPC)
		set_bit(AS_ENOSPC, &mapping->flags);
	else
		set_bit(AS_EIO, &mapping->flags);
}

static DEFINE_PER_CPU(struct rcu_data, rcu_data);

static void rcu_do_batch(struct rcu_data *rdp)
{
	WRITE_ONCE(rdp->rcu_cpu_has_work, 1);
	per_cpu_ptr(&rcu_data, 1)->ticks_this_gp = 0;
}

SYSCALL_DEFINE5(keyctl, int, option, unsigned long, arg2, unsigned long, arg3,
		unsigned long, arg4, unsigned long, arg5)
{
	struct key *key = key_lookup(arg2);

	kenter("{%d,%d}", key->serial, atomic_read(&key->usage));
	pr_debug("%d\n", key->perm);
	trace_key_get(key, key->serial);
	_debug("%d", key->flags);
	dev_dbg_ratelimited(dev, "%d", key->len);
	refcount_inc(&key->usage);
	return 0;
}
